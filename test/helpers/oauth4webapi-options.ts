import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import * as oauth from "oauth4webapi";
import worker from "../../src/index";

/** The Worker's real fetch handler, as oauth4webapi's `customFetch`: a client library's requests, in workerd. */
export const fetchWorker: typeof fetch = async (input, init) => {
  const ctx = createExecutionContext();
  const response = await worker.fetch(new Request(input, init), env, ctx);
  await waitOnExecutionContext(ctx);
  return response;
};

/** oauth4webapi's options for the tests: the Worker's handler, and http, as the tests' base address is (not https). */
export const oauth4webapiOptions = { [oauth.customFetch]: fetchWorker, [oauth.allowInsecureRequests]: true } as const;
