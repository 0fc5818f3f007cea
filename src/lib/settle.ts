import { ApiError } from "./api-error";
import type { ErrorCode } from "./error-codes";

/**
 * What an RPC method answers: the value, or the refusal its HTTP mirror would answer (status, code and sentence). Errors
 * are values across RPC because an exception crossing the boundary keeps only its message.
 */
export type RuntimeResult<T> =
  | { ok: true; value: T }
  | { ok: false; status: number; code: ErrorCode; param?: string; error: string };

export async function settle<T>(work: () => Promise<T>): Promise<RuntimeResult<T>> {
  try {
    return { ok: true, value: await work() };
  } catch (error) {
    if (error instanceof ApiError) {
      const { param } = error.options;
      return {
        ok: false,
        status: error.status,
        code: error.code,
        ...(param === undefined ? {} : { param }),
        error: error.message,
      };
    }
    throw error;
  }
}

/** The other way round, for an HTTP mirror of an RPC method: the value, or the ApiError of the refusal. */
export function unsettle<T>(result: RuntimeResult<T>): T {
  if (result.ok) return result.value;
  throw new ApiError(result.code, result.error, { param: result.param });
}
