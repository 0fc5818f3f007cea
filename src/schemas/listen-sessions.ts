import { z } from "@hono/zod-openapi";
import { recordId } from "../lib/validation";
import { EndpointEvents } from "./webhooks";

/*
 * `POST /api/v1/listen-sessions` (src/routes/listen-sessions.ts; docs/decisions.md, Listening from a laptop): what
 * `secretary listen` sends, and the session it gets back.
 */

export const CreateListenSessionBody = z
  .object({ events: EndpointEvents.optional().openapi({ description: 'Omitted means ["*"], as for an endpoint' }) })
  .openapi("CreateListenSession");

export const ListenSession = z
  .object({
    session_id: z.string().openapi({ example: "ls_q3Jx0cRk1mT9wZpL2vYb4A" }),
    endpoint_id: recordId.openapi({
      description:
        "The session's endpoint: not listed by GET /webhooks, but its deliveries are at GET /webhooks/{id}/deliveries while the session lasts",
    }),
    secret: z.string().openapi({ description: "The session's signing secret (shown once)", example: "whsec_…" }),
    socket_url: z.string().openapi({
      description: "The WebSocket to open within 60 seconds, once, offering connect_token as a subprotocol",
      example: "wss://partners.secretary.example/api/v1/listen-sessions/ls_…/socket",
    }),
    connect_token: z.string().openapi({
      description:
        "The socket's single-use credential (shown once): open socket_url with the subprotocols secretary-listen and this token (Sec-WebSocket-Protocol: secretary-listen, lst_…), never in the URL",
      example: "lst_…",
    }),
    expires_at: z.string().openapi({ description: "When the connect token expires, unused" }),
  })
  .openapi("ListenSession");

/** `POST /api/v1/app/listen-sessions` (docs/decisions.md, Listening as an app): the session of an app. */
export const AppListenSession = ListenSession.extend({
  endpoint_id: recordId.openapi({
    description:
      "The session's app endpoint, copied into every connected business: one of the app's 20, listed by GET /app/webhooks while the session lasts",
  }),
}).openapi("AppListenSession");
