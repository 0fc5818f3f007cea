import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { expect } from "vitest";
import worker from "../../src/index";
import { ERROR_CODES, type ErrorCode } from "../../src/lib/error-codes";

export const BASE = "http://localhost:8787";

/** The Secretary runtime's credential for `/internal/v1` (docs/decisions.md, The Secretary runtime API). */
export const RUNTIME = { Authorization: `Bearer ${env.RUNTIME_TOKEN}` };

/**
 * A request to the Worker's real fetch handler (the default export of src/index.ts), in workerd, with the real
 * bindings, and a bearer credential when one is given. Not through `SELF.fetch`: in this pool version each SELF
 * request costs more than the one before (about 100 ms by the 500th in a file), which made long tests crawl.
 */
export async function call(
  path: string,
  options: {
    key?: string;
    method?: string;
    body?: unknown;
    headers?: Record<string, string>;
    /** Bindings to override, e.g. `{ ALLOW_LOOPBACK_URLS: "" }` for the production outbound policy. */
    bindings?: Partial<typeof env>;
  } = {},
) {
  const headers = new Headers(options.headers);
  if (options.key) headers.set("Authorization", `Bearer ${options.key}`);
  let body: BodyInit | undefined;
  if (options.body !== undefined) {
    body = typeof options.body === "string" ? options.body : JSON.stringify(options.body);
    if (!headers.has("Content-Type")) headers.set("Content-Type", "application/json");
  }
  return dispatch(new Request(`${BASE}${path}`, { method: options.method ?? "GET", headers, body }), options.bindings);
}

/** Bindings every request of `around` gets over the real ones (a recording view of the databases). */
let aroundBindings: Partial<typeof env> = {};

/** Runs `work` with `bindings` over the real ones for every request it makes through `call` and `dispatch`. */
export async function around<T>(bindings: Partial<typeof env>, work: () => Promise<T>): Promise<T> {
  aroundBindings = bindings;
  try {
    return await work();
  } finally {
    aroundBindings = {};
  }
}

/** A request as it is, to the Worker's fetch handler (see `call`), after which its `waitUntil` work has run too. */
export async function dispatch(request: Request, bindings: Partial<typeof env> = {}) {
  const ctx = createExecutionContext();
  const response = await worker.fetch(request, { ...env, ...aroundBindings, ...bindings }, ctx);
  await waitOnExecutionContext(ctx);
  return response;
}

export async function json<T = Record<string, unknown>>(response: Response): Promise<T> {
  return (await response.json()) as T;
}

/** The members an error body may have (docs/errors.md): `error`, `code` and `request_id` always, the rest when they apply. */
const ERROR_MEMBERS = ["error", "code", "param", "field", "request_id"];

/**
 * An error body of the API (docs/errors.md): a sentence, a documented `code` of the answer's status, the request's id
 * as the `X-Request-Id` header gives it, and nothing else. Answers the body for further checks.
 */
export function expectErrorBody(response: Response, body: Record<string, unknown>) {
  expect(ERROR_MEMBERS, `unexpected members in ${JSON.stringify(body)}`).toEqual(
    expect.arrayContaining(Object.keys(body)),
  );
  expect(body.error).toEqual(expect.any(String));
  const code = ERROR_CODES[body.code as ErrorCode];
  expect(code, `"${String(body.code)}" is not a documented code`).toBeDefined();
  expect(code?.status, JSON.stringify(body)).toBe(response.status);
  expect(body.request_id).toBe(response.headers.get("X-Request-Id"));
  expect(body.request_id).toMatch(/\S/);
  return body;
}

/**
 * An error answer of the API: the status, a body of the one error shape saying `sentence`, and, when given, its
 * `code` and `param` (absent when `param` is given as undefined). Each mismatch prints the body's sentence.
 */
export async function expectError(
  response: Response,
  status: number,
  sentence: string | RegExp,
  expected: { code?: ErrorCode; param?: string | undefined } = {},
) {
  await expect(response).toHaveStatus(status);
  const body = expectErrorBody(response, await json(response));
  if (typeof sentence === "string") expect(body.error).toBe(sentence);
  else expect(body.error).toMatch(sentence);
  if (expected.code !== undefined) expect(body.code, String(body.error)).toBe(expected.code);
  if ("param" in expected) expect(body.param, String(body.error)).toBe(expected.param);
  return body;
}

/** A request without a credential is a 401 with the bearer challenge (docs/decisions.md, Authentication and the plan). */
export async function expectMissingCredential(response: Response) {
  expect(response.headers.get("WWW-Authenticate")).toMatch(/^Bearer realm="api"/);
  await expectError(response, 401, "An API key is required: send the header Authorization: Bearer <API key>.");
}
