import { type Context, Hono } from "hono";
import { runOperation } from "../admission/partner-admission";
import type { AppEnv } from "../app-env";
import { createListeningSessionOperation, type openSession } from "../domain/webhooks/listening-sessions";
import { jurisdictionOfSession, sessionObject } from "../durable-objects/jurisdictions";
import { invalid, notFound, unauthorized } from "../lib/api-error";
import { errorResponses } from "../schemas/error-body";
import { CreateListenSessionBody, ListenSession } from "../schemas/listen-sessions";
import { createPartnerRouter, json, partnerRoute } from "./partner-router";

/*
 * Listening sessions (docs/decisions.md, Listening from a laptop; docs/guides/webhooks.md): what `secretary listen`
 * (cli/) calls to receive its side's deliveries through a WebSocket instead of a public URL.
 */

const createRoute = partnerRoute({
  method: "post",
  path: "/listen-sessions",
  operationId: "createListenSession",
  summary: "Start a listening session",
  description:
    "A temporary endpoint of this credential's side whose deliveries go through a WebSocket (what `npx secretary listen` opens): attempts, retries and signatures as for any endpoint. Open `socket_url` within 60 seconds; the session and its endpoint end when the socket closes. Not listed by GET /webhooks, and not counted among the 20 endpoints; at most 5 sessions at once.",
  tags: ["Webhooks"],
  request: { body: { required: true, content: json(CreateListenSessionBody) } },
  responses: {
    201: { description: "The session, its signing secret (shown once) and its socket", content: json(ListenSession) },
    ...errorResponses(400, 401, 403),
  },
});

/** The socket's address on the host the request came to: `wss:` behind https, `ws:` in local development. */
function socketUrl(c: Context<AppEnv>, sessionId: string) {
  const url = new URL(`/api/v1/listen-sessions/${sessionId}/socket`, c.req.url);
  url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
  return url.toString();
}

/** A new session as the 201 answers it, a business's or an app's (src/routes/app-api.ts). */
export const sessionAnswer = (c: Context<AppEnv>, session: Awaited<ReturnType<typeof openSession>>) => ({
  session_id: session.sessionId,
  endpoint_id: session.endpointId,
  secret: session.secret,
  socket_url: socketUrl(c, session.sessionId),
  connect_token: session.token,
  expires_at: session.expiresAt,
});

/**
 * The socket (RFC 6455, 4.1: a GET with `Upgrade: websocket`). No `Authorization`: a WebSocket client in Node or a
 * browser cannot send one, so the session's single-use connect token, offered as a subprotocol after
 * `secretary-listen` (never in the URL, which logs keep), is the credential, judged by the session's own Durable
 * Object, which accepts the socket. Not in the OpenAPI document, which describes HTTP answers only.
 */
async function openSocket(c: Context<AppEnv>) {
  if (c.req.header("Upgrade")?.toLowerCase() !== "websocket") {
    throw invalid("This address takes a WebSocket (a GET with Upgrade: websocket), as `secretary listen` opens it.");
  }
  const id = c.req.param("id") ?? "";
  if (jurisdictionOfSession(id) === undefined) throw notFound("No listening session with that id is open.");
  const answer = await sessionObject(c.env, id).fetch(c.req.raw);
  if (answer.status === 404) throw notFound("No listening session with that id is open.");
  if (answer.status !== 101 || !answer.webSocket) {
    throw unauthorized("The connect token is wrong, expired or already used: start a new listening session.");
  }
  // A response of our own, so that the app's headers can be added on the way out.
  return new Response(null, { status: 101, webSocket: answer.webSocket, headers: answer.headers });
}

export const listenSessions = createPartnerRouter().openapi(createRoute, (c) =>
  runOperation(
    c,
    createListeningSessionOperation,
    () => c.req.valid("json"),
    (session) => c.json(sessionAnswer(c, session), 201),
  ),
);

/**
 * The socket's route, apart from the partner router: it takes no bearer credential, so it is none of the partner
 * routes the OpenAPI document and the tables of every partner route list (docs/architecture.md, Surfaces).
 */
export const listenSocket = new Hono<AppEnv>().get("/listen-sessions/:id/socket", openSocket);
