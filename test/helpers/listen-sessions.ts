import { expect, vi } from "vitest";
import type { components } from "../../sdk/src/partner-api";
import { call, dispatch, json } from "./http";

// Listening sessions as `secretary listen` starts and connects them (docs/decisions.md, Listening from a laptop).

/** The 201 of `POST /api/v1/listen-sessions`, as the OpenAPI document describes it. */
export type Session = components["schemas"]["ListenSession"];
export type DeliveryMessage = {
  type: string;
  delivery_id: number;
  event: string;
  headers: Record<string, string>;
  body: string;
};

export async function startSession(key: string, body: unknown = {}) {
  const response = await call("/api/v1/listen-sessions", { key, method: "POST", body });
  await expect(response).toHaveStatus(201);
  return json<Session>(response);
}

/**
 * The socket as the CLI opens it (RFC 6455, 4.1), through the Worker's fetch handler: its connect token offered as a
 * subprotocol after secretary-listen (`protocols` replaces the offer whole).
 */
export const openSocket = (socketUrl: string, token: string, protocols = `secretary-listen, ${token}`) =>
  dispatch(
    new Request(socketUrl.replace(/^ws/, "http"), {
      headers: { Upgrade: "websocket", "Sec-WebSocket-Protocol": protocols },
    }),
  );

/** An accepted client socket and the delivery messages it receives. */
export async function connect(session: Session) {
  const response = await openSocket(session.socket_url, session.connect_token);
  await expect(response).toHaveStatus(101);
  const socket = response.webSocket as WebSocket;
  socket.accept();
  const messages: DeliveryMessage[] = [];
  socket.addEventListener("message", (event) => {
    messages.push(JSON.parse(event.data as string));
  });
  return { socket, messages };
}

/**
 * A connected session whose CLI answers every delivery 200, the deliveries it received, and the close its socket
 * received, once it has.
 */
export async function answeringEvery(session: Session) {
  const { socket, messages } = await connect(session);
  socket.addEventListener("message", (event) => {
    const { delivery_id } = JSON.parse(event.data as string) as DeliveryMessage;
    socket.send(JSON.stringify({ type: "result", delivery_id, status: 200 }));
  });
  let closed: { code: number; reason: string } | undefined;
  socket.addEventListener("close", (event) => {
    closed = { code: event.code, reason: event.reason };
  });
  const closedWith = () =>
    vi.waitFor(
      () => {
        if (!closed) throw new Error("the socket is still open");
        return closed;
      },
      { timeout: 5_000 },
    );
  return { session, socket, messages, closedWith, isOpen: () => closed === undefined };
}
