import { eq } from "drizzle-orm";
import { expect } from "vitest";
import { events } from "../../src/db/schema";
import type { BookingObject, ReportedBooking } from "../../src/schemas/booking";
import type { OrderObject, ReportedOrder } from "../../src/schemas/order";
import { type createBusiness, db } from "./fixtures";
import { call, json } from "./http";
import { bookingObject, reportChange } from "./platform";

// Reports of the core platform (POST /internal/v1/businesses/{id}/events) as the files of test/platform/ send and read
// them.

export const EVENT_ID = /^evt_[A-Za-z0-9_-]+$/;
export const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
export const NEITHER =
  'The request body must carry a "booking", an "order", or an "event" that is one of payment.received, lead.created, review.created.';

export type Emitted = { events: Array<{ id: string; event: string }> };
export type Business = Awaited<ReturnType<typeof createBusiness>>["business"];

let nextId = 50_000;

/** A full Booking object (docs/guides/syncing.md, Booking and order objects), every member filled in, with the next id. */
export function newBooking(overrides: Partial<ReportedBooking> = {}): ReportedBooking {
  const id = nextId++;
  return bookingObject(id, {
    date: "2026-12-01",
    time: "10:00",
    duration_minutes: 45,
    service: { id: "svc_cut", name: "Haircut", price: "€35" },
    client: { name: "Ana Souza", email: "ana@example.com", phone: "+31612345678" },
    payment: { status: "unpaid", amount_paid: 0, agreed_amount: 30.5, currency: "EUR", reference: null },
    location: "Keizersgracht 1, Amsterdam",
    links: { reschedule: `https://book.example/r/${id}`, cancel: `https://book.example/c/${id}` },
    conversation_id: "conv_123",
    created_at: "2026-11-20T09:30:00.000Z",
    ...overrides,
  });
}

/** A full Order object (docs/guides/syncing.md, Booking and order objects). */
export function newOrder(overrides: Partial<ReportedOrder> = {}): ReportedOrder {
  return {
    id: nextId++,
    status: "pending",
    items: [
      { service_id: "svc_bread", name: "Sourdough", qty: 2, unit_price: 4.5 },
      { service_id: "svc_cake", name: "Carrot cake", qty: 1, unit_price: 12.25 },
    ],
    total: 21.25,
    pay_on_delivery: true,
    fulfillment_type: "delivery",
    delivery_address: "Prinsengracht 2, Amsterdam",
    delivery_notes: "Ring twice",
    tracking_number: null,
    carrier: null,
    ready_at: null,
    estimated_ready_at: "2026-11-21T16:00:00.000Z",
    tracking_url: null,
    client: { name: "Ben Okafor", email: null, phone: "+31687654321" },
    payment: { status: "pending", amount_paid: 0 },
    notes: null,
    conversation_id: null,
    created_at: "2026-11-21T12:00:00.000Z",
    ...overrides,
  };
}

/** The events route with other headers than the runtime token's: for the refusals of a missing or wrong token. */
export const postEventsWith = (businessId: string, body: unknown, headers: Record<string, string>) =>
  call(`/internal/v1/businesses/${businessId}/events`, { method: "POST", body, headers });

/** Reports a change that must emit exactly `names`, and answers the emitted events. */
export async function expectEmitted(businessId: string, body: unknown, names: string[]) {
  const response = await reportChange(businessId, body);
  const emitted = await json<Emitted>(response);
  expect(emitted).toEqual({ events: names.map((event) => ({ id: expect.stringMatching(EVENT_ID), event })) });
  await expect(response).toHaveStatus(names.length > 0 ? 201 : 200);
  return emitted.events;
}

export async function expectNothingEmitted(businessId: string, body: unknown) {
  const response = await reportChange(businessId, body);
  await expect(response).toHaveStatus(200);
  expect(await json(response)).toEqual({ events: [] });
}

/** The stored envelope of an event: exactly its five fields (docs/guides/webhooks.md, The request). */
export async function storedEnvelope(business: Business, emitted: { id: string; event: string } | undefined) {
  if (!emitted) throw new Error("no event emitted");
  const row = await db.select().from(events).where(eq(events.id, emitted.id)).get();
  if (!row) throw new Error(`event ${emitted.id} not stored`);
  expect(row.businessId).toBe(business.id);
  expect(row.type).toBe(emitted.event);
  const envelope = JSON.parse(row.envelope) as Record<string, unknown>;
  expect(Object.keys(envelope).sort()).toEqual(["business", "created_at", "data", "event", "id"]);
  expect(envelope).toMatchObject({
    id: emitted.id,
    event: emitted.event,
    created_at: row.createdAt,
    business: { id: business.id, handle: business.handle, name: business.name },
  });
  expect(envelope.business).toEqual({ id: business.id, handle: business.handle, name: business.name });
  expect(envelope.created_at).toMatch(TIMESTAMP);
  // The booking or order an event carries, as reported (`asReported`): its `updated_at` is the service's.
  const data = envelope.data as { booking?: BookingObject; order?: OrderObject };
  return {
    ...data,
    ...(data.booking && { booking: asReported(data.booking) }),
    ...(data.order && { order: asReported(data.order) }),
  };
}

export const eventCount = async (businessId: string) =>
  (await db.select({ id: events.id }).from(events).where(eq(events.businessId, businessId))).length;

/**
 * An object as read or delivered, without the service's own `updated_at` (checked to be a timestamp): the object as
 * the core platform reported it. test/platform/paging-and-sync.test.ts checks the stamp itself.
 */
export function asReported<T extends { updated_at: string }>(object: T | undefined): Omit<T, "updated_at"> | undefined {
  if (!object) return undefined;
  const { updated_at, ...reported } = object;
  expect(updated_at).toMatch(TIMESTAMP);
  return reported;
}

/** The booking as GET /appointments/{id} answers it, as reported (`asReported`); undefined for a 404. */
export async function appointment(apiKey: string, id: number) {
  const response = await call(`/api/v1/appointments/${id}`, { key: apiKey });
  return response.status === 404 ? undefined : asReported(await json<BookingObject>(response));
}

export async function order(apiKey: string, id: number) {
  const response = await call(`/api/v1/orders/${id}`, { key: apiKey });
  return response.status === 404 ? undefined : asReported(await json<OrderObject>(response));
}
