import { createAppListeningSession } from "../domain/webhooks/app-listening-sessions";
import { sessionObject } from "../durable-objects/jurisdictions";
import { errorResponses } from "../schemas/error-body";
import { AppListenSession, CreateListenSessionBody } from "../schemas/listen-sessions";
import { appRoute, createAppRouter } from "./app-router";
import { sessionAnswer } from "./listen-sessions";
import { IGNORED_MEMBERS, json } from "./partner-router";

/*
 * An app's listening session (docs/decisions.md, Listening as an app): what `secretary listen --app` calls, with the
 * app's own token, to hear every connected business through one socket, opened at the business sessions' socket route
 * (src/routes/listen-sessions.ts).
 */

const createRoute = appRoute({
  method: "post",
  path: "/app/listen-sessions",
  operationId: "createAppListenSession",
  summary: "Listen to every connected business from a laptop",
  description:
    "What `npx secretary listen --app` opens: a listening session whose endpoint, one of the app's 20, every connected business delivers to, now and later. Open `socket_url` within 60 seconds; the endpoint and its copies end with the socket.",
  request: { body: { required: true, content: json(CreateListenSessionBody) } },
  responses: {
    201: {
      description: "The session, its signing secret (shown once) and its socket",
      headers: IGNORED_MEMBERS,
      content: json(AppListenSession),
    },
    ...errorResponses(400, 401, 403, 429),
  },
});

export const appListenSessions = createAppRouter().openapi(createRoute, async (c) => {
  const deps = { ...c.var.globalDeps, listener: (id: string) => sessionObject(c.env, id) };
  const session = await createAppListeningSession(deps, c.var.app.id, c.req.valid("json"));
  return c.json(sessionAnswer(c, session), 201);
});
