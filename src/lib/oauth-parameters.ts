import { invalidRequest } from "./oauth-errors";

/** What a request says about one OAuth parameter. */
export type Parameter = { repeated: true } | { repeated: false; value: string | undefined };

/**
 * RFC 6749 §3.1 and §3.2: "Parameters sent without a value MUST be treated as if they were omitted from the
 * request" and "Request and response parameters MUST NOT be included more than once".
 */
export function readParameter(params: URLSearchParams, name: string): Parameter {
  const values = params.getAll(name);
  if (values.length > 1) return { repeated: true };
  const [value] = values;
  return { repeated: false, value: value === "" ? undefined : value };
}

/** RFC 7636 §4.1: `code-verifier = 43*128unreserved`, unreserved = ALPHA / DIGIT / "-" / "." / "_" / "~". */
export const CODE_VERIFIER_PATTERN = /^[A-Za-z0-9\-._~]{43,128}$/;

/** RFC 7636 §4.2, S256: BASE64URL(SHA256(verifier)) of 32 bytes is always 43 characters without padding. */
export const S256_CHALLENGE_PATTERN = /^[A-Za-z0-9_-]{43}$/;

/** A request parameter that may be absent; `invalid_request` when repeated (RFC 6749 §3.2). */
export function optionalParameter(form: URLSearchParams, name: string): string | undefined {
  const parameter = readParameter(form, name);
  if (parameter.repeated) throw invalidRequest(`The parameter ${name} is repeated.`);
  return parameter.value;
}

/** A request parameter that must be present once; `invalid_request` otherwise. */
export function requiredParameter(form: URLSearchParams, name: string): string {
  const value = optionalParameter(form, name);
  if (value === undefined) throw invalidRequest(`The parameter ${name} is required.`);
  return value;
}
