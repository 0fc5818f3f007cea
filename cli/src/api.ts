import { createPartnerClient, PartnerApiError } from "@secretary/partner-sdk";
import type { Api } from "./arguments.js";

/* The partner API as the CLI calls it: the SDK's client, and each failure told as a sentence a person can act on. */

export const clientOf = (api: Api) =>
  createPartnerClient(api.key, { baseUrl: `${api.base}/api/v1`, retries: { initialDelayMs: 250 } });

/**
 * The sentence for a failed call: the API's own error sentence for a refusal (docs/guides/errors.md), or, when nothing
 * answered at the address, the address and what to do about it.
 */
export function failureSentence(error: unknown, api: Api): string {
  if (error instanceof PartnerApiError) return error.message;
  if (error instanceof TypeError) {
    const cause = (error as TypeError & { cause?: { code?: string; message?: string } }).cause;
    return (
      `Could not connect to the API at ${api.base} (${cause?.code ?? cause?.message ?? error.message}). ` +
      "Start the service (npm start in the project), or give its address with --api-base <url> or SECRETARY_API_BASE."
    );
  }
  return error instanceof Error ? error.message : String(error);
}
