import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { createMiddleware } from "hono/factory";
import { methodNotAllowed } from "hono/method-not-allowed";
import { requestId } from "hono/request-id";
import type { AppEnv } from "./app-env";
import { ApiError, invalid } from "./lib/api-error";
import { requireRuntime } from "./middleware/authenticate-runtime";
import {
  JSON_CONTENT_TYPE,
  NOT_JSON_BODY,
  respondMethodNotAllowed,
  respondNotFound,
  respondToError,
} from "./middleware/error-responses";
import { requestLog } from "./middleware/request-log";
import { responseHeaders } from "./middleware/response-headers";
import { apiDocs } from "./routes/api-docs";
import { partnerApi } from "./routes/api-v1";
import { dashboard } from "./routes/dashboard";
import { guides } from "./routes/guides";
import { runtimeApi } from "./routes/internal/runtime-api";
import { listenSocket } from "./routes/listen-sessions";
import { oauthApi } from "./routes/oauth-api";
import { oauthAuthorize } from "./routes/oauth-authorize";
import { sandboxBusinesses } from "./routes/sandbox-businesses";
import { wellKnown } from "./routes/well-known";

/**
 * The largest JSON body accepted anywhere. The largest legitimate ones: a knowledge push of 8,000 characters (at
 * most 48,000 bytes of JSON even if every character is escaped as \uXXXX) and an intake of 12 fields with 20
 * options each at their longest, about 92,000 bytes when every character takes 4 bytes; the rest is headroom.
 */
export const MAX_BODY_BYTES = 128 * 1024;

/**
 * `/internal/v1` takes JSON bodies only: another type is a 400 naming application/json, as on the partner routes
 * (docs/decisions.md, Errors; Exactly as the contract says), where its validators would read `{}` and answer about a
 * missing field. The runtime token is judged first: a caller without it learns nothing of the body rules.
 */
const internalBodiesAreJson = createMiddleware<AppEnv>(async (c, next) => {
  if (c.req.raw.body === null || JSON_CONTENT_TYPE.test(c.req.header("Content-Type") ?? "")) return next();
  await requireRuntime(c, async () => {});
  throw invalid(NOT_JSON_BODY, undefined, "invalid_content_type");
});

export const app = new Hono<AppEnv>();

app.use(responseHeaders);
// A caller's own X-Request-Id is kept only when it is a short safe token (at most 64 letters, digits, `_`, `-`, `=`:
// hono/request-id's own character rule), so that what is echoed and logged as the request's id is never the caller's
// free text; anything else gets an id of ours (docs/errors.md, The request id).
app.use(requestId({ limitLength: 64 }));
app.use(requestLog);
app.use(methodNotAllowed({ app, onMethodNotAllowed: respondMethodNotAllowed }));
app.use(
  bodyLimit({
    maxSize: MAX_BODY_BYTES,
    onError: () => {
      throw new ApiError("body_too_large", `The request body is larger than ${MAX_BODY_BYTES} bytes.`);
    },
  }),
);
app.use("/internal/v1/*", internalBodiesAreJson);
app.onError(respondToError);
app.notFound(respondNotFound);

app.route("/", apiDocs);
app.route("/", guides);
app.route("/", wellKnown);
app.route("/api/oauth", oauthApi);
app.route("/api/sandbox", sandboxBusinesses);
app.route("/oauth", oauthAuthorize);
app.route("/dashboard", dashboard);
app.route("/api/v1", partnerApi);
// The WebSocket of a listening session: its single-use token is its credential (docs/decisions.md).
app.route("/api/v1", listenSocket);
app.route("/internal/v1", runtimeApi);
