import { env } from "cloudflare:test";
import type { BookingObject } from "../../src/schemas/booking";
import { call } from "./http";

/**
 * A Booking object of the spec (Resources, Booking object), as the core platform reports it; `overrides` replace
 * top-level members (a nested object such as `payment` is replaced whole).
 */
export function bookingObject(id: number, overrides: Partial<BookingObject> = {}): BookingObject {
  return {
    id,
    status: "confirmed",
    date: "2026-12-03",
    time: "15:00",
    duration_minutes: 30,
    service: { id: "svc_1", name: "Beard trim", price: "€20" },
    client: { name: "Noor", email: "noor@example.com", phone: null },
    payment: { status: "unpaid", amount_paid: 0, agreed_amount: null, currency: "EUR", reference: null },
    location: null,
    notes: null,
    reschedule_count: 0,
    original_date: null,
    original_time: null,
    links: null,
    conversation_id: null,
    created_at: "2026-11-22T09:00:00.000Z",
    ...overrides,
  };
}

/**
 * The core platform reports a change (`POST /internal/v1/businesses/{id}/events`) with the runtime token; `bindings`
 * override the Worker's bindings for this request, e.g. a queue that refuses every message.
 */
export const reportChange = (businessId: string, body: unknown, bindings?: Partial<typeof env>) =>
  call(`/internal/v1/businesses/${businessId}/events`, {
    method: "POST",
    headers: { Authorization: `Bearer ${env.RUNTIME_TOKEN}` },
    body,
    bindings,
  });
