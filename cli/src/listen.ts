import { type AppCredentials, type paths, requestAppToken, unwrap } from "@secretary/partner-sdk";
import { clientOf, failureSentence } from "./api.js";
import type { Api } from "./arguments.js";

/*
 * `secretary listen --forward-to <url>` (docs/decisions.md, Listening from a laptop): starts a listening session, opens
 * its WebSocket (RFC 6455), and for each delivery message POSTs the body with the headers it came with (the same
 * signed request an endpoint receives) to the forward URL, then answers the status, which the service records as the
 * attempt's. Ends on ^C, closing the socket, which ends the session: nothing more is delivered through it. With
 * `--app`, the session is the app's, which every business connected to it delivers to (docs/decisions.md, Listening
 * as an app), and each line names the delivery's business.
 */

/**
 * The service waits 10 seconds for an answer (docs/guides/webhooks.md, Answering, retries and the schedule); the
 * forward gets the same.
 */
const FORWARD_TIMEOUT_MS = 10_000;
/** How much of the local answer goes back with the status: enough to read an error. */
const EXCERPT_CHARS = 200;
/**
 * The keepalive: a ping every 30 seconds, which the session's object answers without waking, so that no proxy closes
 * the connection while no event comes. No pong for three pings in a row means the connection is lost.
 */
const KEEPALIVE_MS = 30_000;
const KEEPALIVE_MISSES = 3;
const PING = '{"type":"ping"}';
const PONG = '{"type":"pong"}';

type Delivery = { type: "delivery"; delivery_id: number; event: string; headers: Record<string, string>; body: string };
type Forwarded = { status: number; excerpt: string; error?: string };

export type ListenOptions = {
  api: Api;
  /** The app's credentials: the app's session instead of the key's (`--app`). */
  app?: AppCredentials;
  forwardTo: string;
  events?: string[];
  printSecret?: boolean;
  keepaliveMs?: number;
};

/** The events a session may listen to; the names given on the command line are the service's to check. */
type ListenedEvents = NonNullable<
  NonNullable<paths["/listen-sessions"]["post"]["requestBody"]>["content"]["application/json"]["events"]
>;

/**
 * The key's session, or with `app` the app's, started with its own token (the client credentials grant); answers the
 * session and where its deliveries are listed.
 */
async function startSession({ api, app, events }: ListenOptions) {
  const body = events ? { events: events as ListenedEvents } : {};
  if (!app) {
    const session = await unwrap(clientOf(api).POST("/listen-sessions", { body }));
    return { session, deliveries: `/api/v1/webhooks/${session.endpoint_id}/deliveries` };
  }
  const token = await requestAppToken(app, { baseUrl: `${api.base}/api/v1` });
  const session = await unwrap(clientOf({ ...api, key: token.access_token }).POST("/app/listen-sessions", { body }));
  return { session, deliveries: `/api/v1/app/webhooks/${session.endpoint_id}/deliveries` };
}

/** Runs until the socket closes; answers the exit status: 0 after ^C, 1 when the session could not start or ended. */
export async function listen(options: ListenOptions, print = console.log, printError = console.error) {
  const started = await startSession(options).catch((error: unknown) => {
    printError(failureSentence(error, options.api));
  });
  if (!started) return 1;
  const { session } = started;
  // The connect token travels as a subprotocol after secretary-listen, never in the URL (docs/webhooks.md, Listening
  // sessions end).
  const socket = new WebSocket(session.socket_url, ["secretary-listen", session.connect_token]);
  let stopping = false;
  let keepalive: ReturnType<typeof setInterval> | undefined;
  let unanswered = 0;
  const stop = () => {
    stopping = true;
    // RFC 6455, 7.4.1: 1000, a normal closure.
    socket.close(1000, "secretary listen stopped");
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  const ended = new Promise<number>((resolve) => {
    let finished = false;
    const end = (status: number, sentence?: string) => {
      if (finished) return;
      finished = true;
      clearInterval(keepalive);
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      if (sentence) printError(sentence);
      resolve(status);
    };
    socket.addEventListener("open", () => {
      print(
        options.printSecret
          ? `Ready. Your webhook signing secret is ${session.secret} (^C to quit)`
          : "Ready. (^C to quit; --print-secret shows the signing secret to verify deliveries with)",
      );
      const from = options.app ? " every connected business's events" : "";
      print(`Forwarding${from} to ${options.forwardTo}; deliveries at GET ${started.deliveries}`);
      keepalive = setInterval(() => {
        if (unanswered < KEEPALIVE_MISSES) {
          unanswered += 1;
          return socket.send(PING);
        }
        // A connection that no longer answers may never deliver its close either: the CLI ends now.
        end(1, `The listening session's connection was lost: no answer to ${KEEPALIVE_MISSES} pings.`);
        socket.close(4000, "no answer to pings");
      }, options.keepaliveMs ?? KEEPALIVE_MS);
    });
    socket.addEventListener("close", (event) => {
      if (stopping) return end(0);
      end(1, `The listening session ended (${event.code}${event.reason ? `: ${event.reason}` : ""}).`);
    });
    socket.addEventListener("error", () => {
      if (!stopping) printError("The listening session's socket failed.");
    });
  });
  socket.addEventListener("message", (event) => {
    if (event.data === PONG) {
      unanswered = 0;
      return;
    }
    const delivery = deliveryOf(event.data);
    if (!delivery) return;
    void forward(options.forwardTo, delivery).then((forwarded) => {
      if (socket.readyState === WebSocket.OPEN) {
        socket.send(
          JSON.stringify({
            type: "result",
            delivery_id: delivery.delivery_id,
            status: forwarded.status,
            body_excerpt: forwarded.error ?? forwarded.excerpt,
          }),
        );
      }
      const outcome = forwarded.error ? `ERR ${forwarded.error}` : String(forwarded.status);
      const business = options.app ? `  ${businessOf(delivery.body)}` : "";
      print(`${new Date().toISOString()}  --> ${delivery.event} [dlv ${delivery.delivery_id}] ${outcome}${business}`);
    });
  });
  return ended;
}

function deliveryOf(data: unknown): Delivery | undefined {
  if (typeof data !== "string") return undefined;
  try {
    const message = JSON.parse(data) as Partial<Delivery>;
    return message.type === "delivery" ? (message as Delivery) : undefined;
  } catch {
    return undefined;
  }
}

/** The business an envelope names (docs/guides/webhooks.md, The request): its name and handle. */
function businessOf(envelope: string): string {
  try {
    const { business } = JSON.parse(envelope) as { business: { name: string; handle: string } };
    return `${business.name} (${business.handle})`;
  } catch {
    return "";
  }
}

/** The delivery's request, as the service would have sent it, to the local URL; status 0 when nothing answered. */
async function forward(url: string, delivery: Delivery): Promise<Forwarded> {
  try {
    const answer = await fetch(url, {
      method: "POST",
      headers: delivery.headers,
      body: delivery.body,
      // As the service's own deliveries: a redirect is an answer, not followed.
      redirect: "manual",
      signal: AbortSignal.timeout(FORWARD_TIMEOUT_MS),
    });
    // Cut by characters, never inside a surrogate pair, as the service cuts an answer's excerpt.
    return {
      status: answer.status,
      excerpt: Array.from(await answer.text())
        .slice(0, EXCERPT_CHARS)
        .join(""),
    };
  } catch (error) {
    const reason =
      error instanceof Error && error.name === "TimeoutError"
        ? `no answer within ${FORWARD_TIMEOUT_MS / 1000} seconds`
        : ((error as Error & { cause?: Error }).cause?.message ?? String(error));
    return { status: 0, excerpt: "", error: reason };
  }
}
