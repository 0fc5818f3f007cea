import { describe, expect, expectTypeOf, it } from "vitest";
import sdkPackage from "../../sdk/package.json";
import {
  createPartnerClient,
  type PagedPath,
  type PartnerClientOptions,
  paginate,
  unwrap,
  VERSION,
} from "../../sdk/src/index";
import { retryAfterMs } from "../../sdk/src/requests";
import type { Business } from "../../src/domain/access/businesses";
import { deliveriesTo } from "../helpers/deliveries-api";
import { createBusiness } from "../helpers/fixtures";
import { BASE, dispatch } from "../helpers/http";

// What the SDK's client adds to every request (sdk/README.md, Retries and idempotency): its User-Agent, an
// Idempotency-Key on every POST, the same across its retries, and retries of 429, 5xx and failed connections only
// where a retry cannot do anything twice. Each retry here is asked to wait 0 ms, so nothing sleeps.

type Sent = { method: string; path: string; headers: Headers; body: string };

/** A client whose requests reach the Worker after `answers` (one per request, in order) are given instead. */
function clientWith(
  apiKey: string,
  answers: Array<() => Response | Promise<Response>>,
  retries: PartnerClientOptions["retries"] = {},
) {
  const sent: Sent[] = [];
  const client = createPartnerClient(apiKey, {
    baseUrl: `${BASE}/api/v1`,
    retries: { initialDelayMs: 0, ...retries },
    fetch: async (request) => {
      sent.push({
        method: request.method,
        path: new URL(request.url).pathname,
        headers: request.headers,
        body: await request.clone().text(),
      });
      const answer = answers.shift();
      return answer ? answer() : dispatch(request);
    },
  });
  return { client, sent };
}

const unavailable = (retryAfter?: string) => () =>
  new Response("busy", { status: 503, headers: retryAfter === undefined ? {} : { "Retry-After": retryAfter } });
const webhook = { url: "https://partner.example/hooks", events: ["booking.created" as const] };

describe("the SDK's requests", async () => {
  const { business, apiKey } = await createBusiness();

  it("sends User-Agent secretary-partner-sdk/<version>, the version of its package.json", async () => {
    expect(VERSION).toBe(sdkPackage.version);
    const { client, sent } = clientWith(apiKey, []);
    await unwrap(client.GET("/me"));
    expect(sent[0]?.headers.get("User-Agent")).toBe(`secretary-partner-sdk/${sdkPackage.version}`);
    const own = createPartnerClient(apiKey, {
      baseUrl: `${BASE}/api/v1`,
      headers: { "User-Agent": "partner-app/3.1" },
      fetch: async (request) => {
        expect(request.headers.get("User-Agent")).toBe("partner-app/3.1");
        return dispatch(request);
      },
    });
    await unwrap(own.GET("/me"));
  });

  it("gives every POST an Idempotency-Key and retries a 503 with the same key and body: one endpoint is made", async () => {
    const { client, sent } = clientWith(apiKey, [unavailable("0"), unavailable()]);
    const created = await unwrap(client.POST("/webhooks", { body: webhook }));
    expect(sent).toHaveLength(3);
    const keys = sent.map((request) => request.headers.get("Idempotency-Key"));
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(new Set(keys).size).toBe(1);
    expect(new Set(sent.map((request) => request.body)).size).toBe(1);
    const list = await unwrap(client.GET("/webhooks"));
    expect(list.data.filter((endpoint) => endpoint.id === created.id)).toHaveLength(1);
  });

  it("answers the first answer again when a retried POST had in fact been done: the service replays it", async () => {
    let first: Response | undefined;
    const { client, sent } = clientWith(apiKey, [
      async () => {
        // The service made the endpoint, but its answer was lost on the way: a 502 from a proxy instead.
        const [request] = sent;
        first = await dispatch(
          new Request(`${BASE}/api/v1/webhooks`, { method: "POST", headers: request?.headers, body: request?.body }),
        );
        return new Response("bad gateway", { status: 502 });
      },
    ]);
    const created = await unwrap(client.POST("/webhooks", { body: webhook }));
    await expect(first).toHaveStatus(201);
    expect(created.id).toBe(((await first?.json()) as { id: number } | undefined)?.id);
    expect(sent).toHaveLength(2);
  });

  it("keeps a key the caller gives", async () => {
    const { client, sent } = clientWith(apiKey, []);
    await unwrap(client.POST("/webhooks", { body: webhook, headers: { "Idempotency-Key": "partner-own-key-1" } }));
    expect(sent[0]?.headers.get("Idempotency-Key")).toBe("partner-own-key-1");
  });

  it("retries a 429 after the Retry-After it carries, a GET's failed connection, and stops after maxRetries", async () => {
    const limited = clientWith(apiKey, [() => new Response("{}", { status: 429, headers: { "Retry-After": "0" } })]);
    expect(await unwrap(limited.client.GET("/me"))).toMatchObject({ id: business.id });
    expect(limited.sent).toHaveLength(2);

    const dropped = clientWith(apiKey, [
      () => {
        throw new TypeError("fetch failed");
      },
    ]);
    expect(await unwrap(dropped.client.GET("/me"))).toMatchObject({ id: business.id });
    expect(dropped.sent).toHaveLength(2);

    const down = clientWith(apiKey, [unavailable(), unavailable(), unavailable(), unavailable()], { maxRetries: 2 });
    const { response } = await down.client.GET("/me");
    await expect(response).toHaveStatus(503);
    expect(down.sent).toHaveLength(3);

    const once = clientWith(apiKey, [unavailable()], { maxRetries: 0 });
    await expect((await once.client.GET("/me")).response).toHaveStatus(503);
    expect(once.sent).toHaveLength(1);
  });

  it("does not retry a refusal, nor wait longer than maxDelayMs for a Retry-After", async () => {
    const refused = clientWith("sk_live_not-a-key", []);
    await expect((await refused.client.GET("/me")).response).toHaveStatus(401);
    expect(refused.sent).toHaveLength(1);
    const later = clientWith(apiKey, [() => new Response("{}", { status: 429, headers: { "Retry-After": "3600" } })]);
    await expect((await later.client.GET("/me")).response).toHaveStatus(429);
    expect(later.sent).toHaveLength(1);
  });

  it("reads Retry-After as seconds or as an HTTP date (RFC 9110, 10.2.3)", () => {
    const now = Date.parse("2026-11-28T12:00:00Z");
    expect(retryAfterMs("7", now)).toBe(7000);
    expect(retryAfterMs("Sat, 28 Nov 2026 12:00:30 GMT", now)).toBe(30_000);
    expect(retryAfterMs("Sat, 28 Nov 2026 11:00:00 GMT", now)).toBe(0);
    expect(retryAfterMs("soon", now)).toBeUndefined();
    expect(retryAfterMs(null, now)).toBeUndefined();
  });

  it("pages every paged list of the document, a path with parameters included", async () => {
    expectTypeOf<PagedPath>().toEqualTypeOf<
      | "/appointments"
      | "/orders"
      | "/events"
      | "/webhooks/{id}/deliveries"
      | "/app/connections"
      | "/app/webhooks/{id}/deliveries"
      | "/app/events"
    >();
    const { client, sent } = clientWith(apiKey, []);
    const endpoint = await unwrap(client.POST("/webhooks", { body: { url: "https://partner.example/paged" } }));
    const { deliveryIds } = await deliveriesTo(business as Business, endpoint.id, 5);
    sent.length = 0;
    const seen: number[] = [];
    for await (const delivery of paginate(client, "/webhooks/{id}/deliveries", { limit: 2 }, { id: endpoint.id })) {
      seen.push(delivery.id);
    }
    expect(seen.sort()).toEqual([...deliveryIds].sort());
    expect(sent.map((request) => request.path)).toEqual(Array(3).fill(`/api/v1/webhooks/${endpoint.id}/deliveries`));
  });
});
