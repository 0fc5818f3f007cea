import type { z } from "@hono/zod-openapi";
import type { EventName } from "../../names-and-limits";
import type { ActionObject } from "../../schemas/actions";
import type { BookingObject } from "../../schemas/booking";
import type { EventDataMap } from "../../schemas/events";
import type { AnswerObject } from "../../schemas/intake-responses";
import type { IntakeObject } from "../../schemas/intakes";
import type { OrderObject } from "../../schemas/order";
import type { EventDraft } from "./event-draft";

/*
 * One realistic `data` per event name, for test events (docs/webhooks.md, Test events), in the shapes partners receive
 * (docs/guides/webhooks.md, The events), whole bookings and orders, so that a partner's handler meets in CI what it
 * will meet in production. Each is checked against the schemas the core platform's reports are validated with
 * (test/webhooks/test-events.test.ts). Invented people and places; example.com addresses.
 */

const booking = {
  id: 1042,
  status: "confirmed",
  date: "2026-12-03",
  time: "15:00",
  duration_minutes: 30,
  service: { id: "svc_1", name: "Beard trim", price: "€20" },
  client: { name: "Noor Haddad", email: "noor@example.com", phone: "+31612345678" },
  payment: { status: "unpaid", amount_paid: 0, agreed_amount: null, currency: "EUR", reference: null },
  location: null,
  notes: "First visit",
  reschedule_count: 0,
  original_date: null,
  original_time: null,
  links: {
    reschedule: "https://example.com/bookings/1042/reschedule",
    cancel: "https://example.com/bookings/1042/cancel",
  },
  conversation_id: "conv_8f2k1q",
  created_at: "2026-11-22T09:00:00.000Z",
  updated_at: "2026-11-22T09:00:00.412Z",
} satisfies BookingObject;

const rescheduled = {
  ...booking,
  date: "2026-12-05",
  time: "11:30",
  reschedule_count: 1,
  original_date: booking.date,
  original_time: booking.time,
  updated_at: "2026-11-24T17:05:31.208Z",
} satisfies BookingObject;

/** What the sample order holds and who pays for it: also the basket of a sandbox's new orders (src/domain/sandbox). */
export const SAMPLE_BASKET = {
  items: [
    { service_id: "svc_sourdough", name: "Sourdough loaf", qty: 2, unit_price: 4.5 },
    { service_id: "svc_croissant", name: "Butter croissant", qty: 4, unit_price: 2.25 },
  ],
  total: 18,
  pay_on_delivery: false,
  client: { name: "Ben Okafor", email: "ben@example.com", phone: "+31687654321" },
  payment: { status: "paid", amount_paid: 18 },
} satisfies Pick<OrderObject, "items" | "total" | "pay_on_delivery" | "client" | "payment">;

const order = {
  id: 2077,
  status: "pending",
  ...SAMPLE_BASKET,
  fulfillment_type: "pickup",
  delivery_address: null,
  delivery_notes: null,
  tracking_number: null,
  carrier: null,
  ready_at: null,
  estimated_ready_at: "2026-12-03T10:30:00.000Z",
  tracking_url: "https://example.com/orders/2077",
  notes: "No seeds on the loaves, please",
  conversation_id: "conv_3j9d7w",
  created_at: "2026-12-03T09:12:00.000Z",
  updated_at: "2026-12-03T09:12:00.377Z",
} satisfies OrderObject;

const orderIn = (status: OrderObject["status"], changes: Partial<OrderObject> = {}) =>
  ({ order: { ...order, status, ...changes } }) satisfies { order: OrderObject };

const answers = [
  { id: "job", label: "What would you like renovated?", type: "textarea", value: "The bathroom: tiles and shower" },
  { id: "start", label: "When should the work start?", type: "date", value: "2027-01-11" },
  { id: "email", label: "Your email address", type: "email", value: "noor@example.com", proof: "stated" },
  { id: "phone", label: "Your phone number", type: "phone", value: "+31612345678", proof: "verified" },
] satisfies z.infer<typeof AnswerObject>[];

const action = {
  id: 31,
  name: "check_stock",
  title: "Check stock",
  description: "Tells whether a product is in stock today, for customers asking about availability.",
  url: "https://partner.example.com/secretary/stock",
  parameters: {
    type: "object",
    properties: { sku: { type: "string", description: "The product code" } },
    required: ["sku"],
  },
  enabled: true,
  changePending: false,
  source: "api_key",
  mcpServerId: null,
  failureCount: 0,
  lastCalledAt: null,
  lastSuccessAt: null,
  lastFailureAt: null,
  createdAt: "2026-11-20T08:00:00.000Z",
  updatedAt: "2026-11-21T16:45:00.000Z",
} satisfies ActionObject;

const intake = {
  id: 7,
  name: "quote_request",
  title: "Quote request",
  description: "When a customer asks for a quote for renovation work; not for questions about an existing job.",
  fields: [
    { id: "job", label: "What would you like renovated?", type: "textarea", required: true },
    { id: "start", label: "When should the work start?", type: "date", required: false },
    { id: "email", label: "Your email address", type: "email", required: true },
    { id: "phone", label: "Your phone number", type: "phone", required: false },
  ],
  enabled: true,
  createdAt: "2026-11-20T08:00:00.000Z",
  updatedAt: "2026-11-21T16:45:00.000Z",
} satisfies IntakeObject;

const SAMPLES: EventDataMap = {
  "booking.created": { booking },
  "booking.rescheduled": { booking: rescheduled, previous: { date: booking.date, time: booking.time } },
  "booking.cancelled": {
    booking: { ...booking, status: "cancelled" },
    cancelled_by: "client",
    reason: "Ill, will book again next week",
  },
  "booking.completed": { booking: { ...booking, status: "completed" } },
  "order.created": orderIn("pending"),
  "order.preparing": orderIn("preparing"),
  "order.ready": orderIn("ready_for_pickup", { ready_at: "2026-12-03T10:24:00.000Z" }),
  "order.dispatched": orderIn("out_for_delivery", {
    fulfillment_type: "delivery",
    delivery_address: "Prinsengracht 263, 1016 GV Amsterdam",
    delivery_notes: "Ring twice",
    tracking_number: "3SXYZ0012345678",
    carrier: "PostNL",
  }),
  "order.fulfilled": orderIn("fulfilled", { ready_at: "2026-12-03T10:24:00.000Z" }),
  "order.cancelled": { ...orderIn("cancelled"), reason: "Out of sourdough today" },
  "payment.received": {
    kind: "booking",
    amount: 20,
    currency: "EUR",
    reference: "pay_7Hq2Lx",
    booking: {
      ...booking,
      payment: { status: "paid", amount_paid: 20, agreed_amount: null, currency: "EUR", reference: "pay_7Hq2Lx" },
    },
  },
  "lead.created": {
    lead: {
      id: "lead_5521",
      name: "Sam de Vries",
      contact: "sam@example.com",
      message: "Do you have time for a group of five on 14 February?",
      source: "website_widget",
      created_at: "2026-12-02T18:03:11.000Z",
    },
  },
  "review.created": {
    review: {
      id: "rev_318",
      rating: 5,
      body: "Quick, friendly and exactly the cut I asked for.",
      client_name: "Noor Haddad",
      status: "published",
      submitted_at: "2026-12-03T16:10:00.000Z",
    },
  },
  ping: { message: "Test event sent with POST /webhooks/{id}/test." },
  "intake.completed": {
    intake: { id: intake.id, name: intake.name, title: intake.title },
    response_id: 512,
    conversation: { id: "conv_8f2k1q", channel: "whatsapp" },
    answers,
    completed_at: "2026-12-03T09:41:27.000Z",
  },
  "action.enabled": { action, reason: "owner" },
  "action.disabled": { action: { ...action, enabled: false }, reason: "changed" },
  "action.change_accepted": { action },
  "intake.enabled": { intake, reason: "owner" },
  "intake.disabled": { intake: { ...intake, enabled: false }, reason: "credential_revoked" },
  "app.connected": { connected_at: "2026-12-01T08:30:00.000Z" },
  "app.disconnected": { disconnected_at: "2026-12-04T17:02:45.000Z" },
};

/** A sample event of that name: its data typed as the event's (src/schemas/events.ts, `EVENT_DATA`). */
export const sampleEvent = <E extends EventName>(event: E): EventDraft<E> => ({ event, data: SAMPLES[event] });

/** The samples for readers that take a sample apart member by member, whatever its event (the tests). */
export const SAMPLE_DATA: Readonly<Record<EventName, Record<string, unknown>>> = SAMPLES;
