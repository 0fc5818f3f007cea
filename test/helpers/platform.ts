import type { env } from "cloudflare:test";
import type { ReportedBooking } from "../../src/schemas/booking";
import bookingSample from "../fixtures/booking.json";
import { call, RUNTIME } from "./http";

/**
 * A Booking object (docs/guides/syncing.md, Booking and order objects), as the core platform reports it; `overrides` replace
 * top-level members (a nested object such as `payment` is replaced whole).
 */
export function bookingObject(id: number, overrides: Partial<ReportedBooking> = {}): ReportedBooking {
  const { $comment: _, ...sample } = bookingSample;
  return { ...(sample as Omit<ReportedBooking, "id">), id, ...overrides };
}

/**
 * The core platform reports a change (`POST /internal/v1/businesses/{id}/events`) with the runtime token; `bindings`
 * override the Worker's bindings for this request, e.g. a queue that refuses every message.
 */
export const reportChange = (businessId: string, body: unknown, bindings?: Partial<typeof env>) =>
  call(`/internal/v1/businesses/${businessId}/events`, {
    method: "POST",
    headers: RUNTIME,
    body,
    bindings,
  });
