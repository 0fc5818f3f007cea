import { describe, expect, it } from "vitest";
import { createPartnerClient, PartnerApiError, paginate, unwrap } from "../../sdk/src/index";
import { bookings, orders } from "../../src/db/schema";
import { bookingRow, createBusiness, insertAll, orderRow } from "../helpers/fixtures";
import { BASE, dispatch } from "../helpers/http";
import { bookingObject, reportChange } from "../helpers/platform";

// The SDK's client (sdk/src/client.ts) against the Worker: openapi-fetch over the types generated from the committed
// openapi.json, the lists read page by page (docs/syncing.md) and refusals read as PartnerApiError (docs/errors.md).
describe("the SDK's client", async () => {
  const { business, apiKey } = await createBusiness();
  /** The URLs the client asked for, to see its pages. */
  const asked: URL[] = [];
  const client = createPartnerClient(apiKey, {
    baseUrl: `${BASE}/api/v1`,
    fetch: (request) => {
      asked.push(new URL(request.url));
      return dispatch(request);
    },
  });
  const booked = Array.from({ length: 5 }, (_, i) => bookingRow(business.id, { date: `2026-12-0${i + 1}` }));
  await insertAll(bookings, booked);
  await insertAll(orders, [orderRow(business.id), orderRow(business.id), orderRow(business.id)]);

  it("pages through /appointments: every booking once, in the list's order, two at a time", async () => {
    asked.length = 0;
    const seen = [];
    for await (const booking of paginate(client, "/appointments", { limit: 2 })) seen.push(booking);
    const whole = await unwrap(client.GET("/appointments", { params: { query: { limit: 100 } } }));
    expect(seen).toEqual(whole.data);
    expect(seen.map((booking) => booking.id).sort()).toEqual(booked.map((row) => row.id).sort());
    // Three pages (2, 2, 1): each after the last id of the one before.
    const pages = asked.slice(0, 3).map((url) => url.searchParams.get("starting_after"));
    expect(pages).toEqual([null, String(seen[1]?.id), String(seen[3]?.id)]);
    expect(asked.slice(0, 3).every((url) => url.searchParams.get("limit") === "2")).toBe(true);
  });

  it("keeps the query on every page, and stops early when the caller breaks off", async () => {
    const confirmed = [];
    for await (const booking of paginate(client, "/appointments", { limit: 1, since: "2026-12-04" })) {
      confirmed.push(booking.date);
    }
    expect(confirmed.sort()).toEqual(["2026-12-04", "2026-12-05"]);
    asked.length = 0;
    for await (const _ of paginate(client, "/appointments", { limit: 1 })) break;
    expect(asked).toHaveLength(1);
  });

  it("pages through /orders and /events, whose ids are integers and evt_ strings", async () => {
    const ordered = [];
    for await (const order of paginate(client, "/orders", { limit: 2 })) ordered.push(order.id);
    expect(ordered).toHaveLength(3);
    for (const id of [94_001, 94_002, 94_003]) {
      await expect(await reportChange(business.id, { booking: bookingObject(id) })).toHaveStatus(201);
    }
    const events = [];
    for await (const event of paginate(client, "/events", { type: "booking.created", limit: 2 })) events.push(event);
    expect(events.map((event) => event.id)).toEqual([
      expect.stringMatching(/^evt_/),
      expect.any(String),
      expect.any(String),
    ]);
    expect(new Set(events.map((event) => event.id)).size).toBe(3);
  });

  it("unwraps an answer's body", async () => {
    const me = await unwrap(client.GET("/me"));
    expect(me).toMatchObject({ id: business.id, handle: business.handle });
  });

  it("throws a refusal as PartnerApiError: code, param, request id and status", async () => {
    const response = await dispatch(
      new Request(`${BASE}/api/v1/appointments?limit=1000`, { headers: { Authorization: `Bearer ${apiKey}` } }),
    );
    const expectedCode = ((await response.json()) as { code: string }).code;
    const error = await unwrap(client.GET("/appointments", { params: { query: { limit: 1000 } } })).catch(
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(PartnerApiError);
    expect(error).toMatchObject({ status: 400, code: expectedCode, param: "limit", name: "PartnerApiError" });
    expect((error as PartnerApiError).requestId).toMatch(/\S/);
  });

  it("throws PartnerApiError from the iterator when a page is refused, with the answer's X-Request-Id", async () => {
    let requestId: string | null = null;
    const refused = createPartnerClient("sk_live_not-a-key", {
      baseUrl: `${BASE}/api/v1`,
      fetch: async (request) => {
        const response = await dispatch(request);
        requestId = response.headers.get("X-Request-Id");
        return response;
      },
    });
    const error = await (async () => {
      for await (const _ of paginate(refused, "/appointments")) return "a page";
    })().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(PartnerApiError);
    expect(error).toMatchObject({ status: 401, code: "invalid_credential", param: undefined });
    expect((error as PartnerApiError).requestId).toBe(requestId);
  });

  it("names an answer that is not the API's error body unexpected_answer", async () => {
    const proxied = createPartnerClient(apiKey, {
      retries: { maxRetries: 0 },
      baseUrl: `${BASE}/api/v1`,
      fetch: async () =>
        new Response("<h1>Bad gateway</h1>", { status: 502, headers: { "X-Request-Id": "req_proxy" } }),
    });
    const error = await unwrap(proxied.GET("/me")).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ status: 502, code: "unexpected_answer", requestId: "req_proxy" });
  });
});
