import { createRoute, OpenAPIHono, type RouteConfig } from "@hono/zod-openapi";
import { IDEMPOTENCY_HEADER, idempotency, REPLAYED_HEADER, WAIT_MS } from "../admission/idempotency";
import { admittedFirst, partnerCredential } from "../admission/partner-admission";
import type { AppEnv } from "../app-env";
import { IGNORED_MEMBERS_HEADER } from "../lib/ignored-members";
import { rejectInvalid } from "../lib/validation";
import { ErrorBody } from "../schemas/error-body";

/**
 * A router of the partner API: its routes are validated by their zod schemas (`hook` says how a failure reads) and
 * documented in the OpenAPI document. A request the schema refuses gets its 400 only once its credential is admitted.
 */
export const createPartnerRouter = (hook: typeof rejectInvalid = rejectInvalid) =>
  new OpenAPIHono<AppEnv>({ defaultHook: admittedFirst(hook) });

/**
 * The content of a body the route takes or answers: JSON with `schema` (docs/guides/getting-started.md, Where to send
 * requests).
 */
export const json = <Schema>(schema: Schema) => ({ "application/json": { schema } });

type Responses = RouteConfig["responses"];
type ParameterObject = NonNullable<RouteConfig["parameters"]>[number];

const STILL_RUNNING = `A request with the same ${IDEMPOTENCY_HEADER} is still running after a wait of up to ${WAIT_MS / 1000} seconds; retry`;

/**
 * What every POST documents of `Idempotency-Key` (docs/idempotency.md): the header, `Idempotent-Replayed` on a
 * replayed success, 422 for the key used with another request and 409 while the first is still running (after a
 * route's own 409, when it has one). The header is read by the `idempotency` middleware, not by a zod validator: its
 * 400 comes after the credential's admission, like every request check.
 */
function withIdempotency(responses: Responses): Responses {
  const ownConflict = responses[409];
  return {
    ...withHeaders(responses, {
      [REPLAYED_HEADER]: {
        description: `\`true\` when this is the kept answer of an earlier request with the same ${IDEMPOTENCY_HEADER}`,
        schema: { type: "string", enum: ["true"] },
      },
    }),
    409: {
      description:
        ownConflict && "description" in ownConflict
          ? `${ownConflict.description}; or: ${STILL_RUNNING}`
          : STILL_RUNNING,
      content: json(ErrorBody),
    },
    422: {
      description: `This ${IDEMPOTENCY_HEADER} was already used with another request (method, path or body)`,
      content: json(ErrorBody),
    },
  };
}

/** `headers` added to every 2xx answer of `responses`. */
function withHeaders(responses: Responses, headers: Record<string, object>): Responses {
  return Object.fromEntries(
    Object.entries(responses).map(([status, response]) => [
      status,
      status.startsWith("2") && !("$ref" in response)
        ? { ...response, headers: { ...response.headers, ...headers } }
        : response,
    ]),
  );
}

/** What every operation with a JSON body documents of the members it ignored (docs/guides/errors.md, Unknown members). */
export const IGNORED_MEMBERS = {
  [IGNORED_MEMBERS_HEADER]: {
    description:
      "The members of the body the operation does not know, which it ignored: `event, fields[1].hint` (top-level and nested, as `param` names them). Absent when it knew every member: check it for a misspelt name",
    schema: { type: "string" as const },
  },
};

const IDEMPOTENCY_PARAMETER: ParameterObject = {
  name: IDEMPOTENCY_HEADER,
  in: "header",
  required: false,
  description:
    "1 to 255 printable ASCII characters: the first completed answer is kept 24 hours for this credential and this key, and answered again to the same request",
  schema: { type: "string", minLength: 1, maxLength: 255, pattern: "^[ -~]+$" },
};

/**
 * A partner route, which needs `Authorization: Bearer <key or token>` (docs/guides/getting-started.md, A credential),
 * as the document states. The credential's shape is checked first; its handler runs one partner operation
 * (src/admission/partner-admission.ts), which admits the credential (lookup, plan, request budget) before anything else.
 * Declared per route rather than on `/api/v1/*`, so that a public path under `/api/v1` (the OpenAPI document) keeps
 * its 404 and 405 answers. Every POST takes `Idempotency-Key`, claimed at the admission.
 */
export function partnerRoute<const Config extends Omit<RouteConfig, "middleware" | "security">>(config: Config) {
  // The handler's typed answers stay those the route declares; the document adds the key's header and answers, and
  // the header naming a body's ignored members.
  const responses = config.request?.body ? withHeaders(config.responses, IGNORED_MEMBERS) : config.responses;
  const documented = (
    config.method === "post"
      ? { ...config, parameters: [IDEMPOTENCY_PARAMETER], responses: withIdempotency(responses) }
      : { ...config, responses }
  ) as Config;
  return createRoute({
    ...documented,
    security: [{ bearerAuth: [] }],
    middleware: [partnerCredential, idempotency] as const,
  });
}
