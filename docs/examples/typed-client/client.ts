// A partner's typed client of the Secretary Partner API (docs/openapi.md), written with the partner SDK (sdk/): its
// client is openapi-fetch over the types openapi-typescript generates from openapi.json (sdk/src/partner-api.d.ts,
// written by `npm run openapi`). The project type-checks this file (`npm run typecheck`) and runs it against the
// Worker (test/api/typed-client.test.ts), so what it shows is what the API does.
import {
  createPartnerClient,
  type EventOf,
  type PartnerClient,
  type PartnerClientOptions,
  paginate,
  unwrap,
  type WebhookEvent,
} from "../../../sdk/src/index";

export { PartnerApiError } from "../../../sdk/src/index";
export type { EventOf, PartnerClient };

/** A client for one credential: an API key (`sk_live_…`) or an OAuth access token. */
export const partnerClient = (credential: string, options: PartnerClientOptions = {}) =>
  createPartnerClient(credential, options);

/** The confirmed appointments on or after `since` (`YYYY-MM-DD`): the query and the answer are typed. */
export async function confirmedAppointments(client: PartnerClient, since: string) {
  const page = await unwrap(
    client.GET("/appointments", { params: { query: { status: "confirmed", since, limit: 100 } } }),
  );
  return page.data;
}

/**
 * Every booking changed at or after `since` (the largest `updated_at` of the previous sync), page by page: the SDK's
 * iterator starts each page after the last id of the one before, while `has_more` says more follow.
 */
export async function bookingsChangedSince(client: PartnerClient, since: string) {
  const changed = [];
  for await (const booking of paginate(client, "/appointments", { updated_since: since, limit: 100 })) {
    changed.push(booking);
  }
  return changed;
}

/** One booking by the id an event or a list carried: path ids are the integers the bodies carry. */
export const booking = (client: PartnerClient, id: number) =>
  unwrap(client.GET("/appointments/{id}", { params: { path: { id } } }));

/** Subscribes `url` to new and cancelled bookings. The answer's `secret` is shown this once: store it. */
export const subscribeToBookings = (client: PartnerClient, url: string) =>
  unwrap(
    client.POST("/webhooks", {
      body: { url, events: ["booking.created", "booking.cancelled"], description: "Bookings into our calendar" },
    }),
  );

/** Moves an endpoint to `url` and adds the rescheduled bookings to its events; its secret and history stay. */
export function moveEndpoint(client: PartnerClient, id: number, url: string) {
  const events = ["booking.created", "booking.cancelled", "booking.rescheduled"] as const;
  return unwrap(client.PATCH("/webhooks/{id}", { params: { path: { id } }, body: { url, events: [...events] } }));
}

/** Unsubscribes the endpoint of the id its subscription answered. */
export async function unsubscribe(client: PartnerClient, id: number) {
  await unwrap(client.DELETE("/webhooks/{id}", { params: { path: { id } } }));
}

/** Any event, told apart by its `event` member (the SDK's `WebhookEvent`, which `verifyWebhook` answers). */
export type AnyEvent = WebhookEvent;

/**
 * What a receiver makes of a delivery, once its signature is verified (docs/webhooks.md): each event's `data` is
 * typed by the event's name, so a renamed or removed member is a compile error here rather than a surprise there.
 */
export function summary(event: AnyEvent): string {
  switch (event.event) {
    case "booking.created": {
      const { booking } = event.data;
      return `New booking ${booking.id}: ${booking.service.name} on ${booking.date} at ${booking.time} for ${booking.client.name}`;
    }
    case "booking.cancelled":
      return `Booking ${event.data.booking.id} cancelled`;
    case "order.created":
      return `New order ${event.data.order.id}, ${event.data.order.total} in all`;
    default:
      return `${event.event} from ${event.business.name}`;
  }
}
