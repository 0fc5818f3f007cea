// A partner's typed client of the Secretary Partner API (docs/openapi.md): the types are generated from openapi.json
// by openapi-typescript (partner-api.d.ts, written by `npm run openapi`), the calls are made with openapi-fetch. The
// project type-checks this file (`npm run typecheck`) and runs it against the Worker (test/typed-client.test.ts), so
// what it shows is what the API does.
import createClient from "openapi-fetch";
import type { components, paths, webhooks } from "./partner-api";

export type PartnerClient = ReturnType<typeof partnerClient>;

/**
 * A refusal of the API, for a program: its stable `code` to branch on, the `param` at fault (a form field, a query
 * parameter), and the `request_id` to quote when asking for help (docs/errors.md).
 */
export class PartnerApiError extends Error {
  readonly code: components["schemas"]["Error"]["code"];
  readonly param: string | undefined;
  readonly requestId: string;

  constructor(body: components["schemas"]["Error"]) {
    super(body.error);
    this.name = "PartnerApiError";
    this.code = body.code;
    this.param = body.param;
    this.requestId = body.request_id;
  }
}

/** A client for one credential: an API key (`sk_live_…`) or an OAuth access token. */
export function partnerClient(
  credential: string,
  options: { baseUrl?: string; fetch?: (request: Request) => Promise<Response> } = {},
) {
  return createClient<paths>({
    baseUrl: options.baseUrl ?? "https://partners.secretary.example/api/v1",
    headers: { Authorization: `Bearer ${credential}` },
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
}

/** The confirmed appointments on or after `since` (`YYYY-MM-DD`): the query and the answer are typed. */
export async function confirmedAppointments(client: PartnerClient, since: string) {
  const { data, error } = await client.GET("/appointments", {
    params: { query: { status: "confirmed", since, limit: 100 } },
  });
  if (error) throw new PartnerApiError(error);
  return data.data;
}

/**
 * Every booking changed at or after `since` (the largest `updated_at` of the previous sync), page by page: a page
 * starts after the last id of the one before, while `has_more` says more follow.
 */
export async function bookingsChangedSince(client: PartnerClient, since: string) {
  const changed: components["schemas"]["Booking"][] = [];
  let startingAfter: number | undefined;
  for (;;) {
    const query = {
      updated_since: since,
      limit: 100,
      ...(startingAfter === undefined ? {} : { starting_after: startingAfter }),
    };
    const { data, error } = await client.GET("/appointments", { params: { query } });
    if (error) throw new PartnerApiError(error);
    changed.push(...data.data);
    startingAfter = data.data.at(-1)?.id;
    if (!data.has_more || startingAfter === undefined) return changed;
  }
}

/** One booking by the id an event or a list carried: path ids are the integers the bodies carry. */
export async function booking(client: PartnerClient, id: number) {
  const { data, error } = await client.GET("/appointments/{id}", { params: { path: { id } } });
  if (error) throw new PartnerApiError(error);
  return data;
}

/** Subscribes `url` to new and cancelled bookings. The answer's `secret` is shown this once: store it. */
export async function subscribeToBookings(client: PartnerClient, url: string) {
  const { data, error } = await client.POST("/webhooks", {
    body: { url, events: ["booking.created", "booking.cancelled"], description: "Bookings into our calendar" },
  });
  if (error) throw new PartnerApiError(error);
  return data;
}

/** Moves an endpoint to `url` and adds the rescheduled bookings to its events; its secret and history stay. */
export async function moveEndpoint(client: PartnerClient, id: number, url: string) {
  const events = ["booking.created", "booking.cancelled", "booking.rescheduled"] as const;
  const { data, error } = await client.PATCH("/webhooks/{id}", {
    params: { path: { id } },
    body: { url, events: [...events] },
  });
  if (error) throw new PartnerApiError(error);
  return data;
}

/** Unsubscribes the endpoint of the id its subscription answered. */
export async function unsubscribe(client: PartnerClient, id: number) {
  const { error } = await client.DELETE("/webhooks/{id}", { params: { path: { id } } });
  if (error) throw new PartnerApiError(error);
}

/** An event's body as delivered: the request body of the document's `webhooks` entry of that name. */
export type EventOf<Name extends keyof webhooks> = NonNullable<
  webhooks[Name]["post"]["requestBody"]
>["content"]["application/json"];

/** Any event, told apart by its `event` member. */
export type AnyEvent = { [Name in keyof webhooks]: EventOf<Name> }[keyof webhooks];

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
