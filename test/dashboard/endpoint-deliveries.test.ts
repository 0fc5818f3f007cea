import { describe, expect, it, vi } from "vitest";
import { page, signedIn, submit, testIdText } from "../helpers/dashboard";
import { deliveriesTo } from "../helpers/deliveries-api";
import { call } from "../helpers/http";
import { createOwnerBusiness } from "../helpers/oauth";
import { receiverBox } from "../helpers/receiver";
import { attemptsOf, consumeBatch, deliveryRow, subscribe } from "../helpers/webhooks";

// docs/decisions.md, The owner's dashboard: an endpoint's page shows its deliveries 20 a page, newest first, with
// Older and Newer links; each with its payload, each attempt's status and the start of the receiver's answer (at most
// 200 characters, shown as escaped text), the Test and Sent again marks; and the events it receives in words.

const endpointPath = (id: number, query = "") => `/dashboard/webhooks/${id}${query}`;

/** The deliveries' ids, in the order the page shows them. */
const shownIds = (html: string) => [...html.matchAll(/data-testid="delivery-(\d+)"/g)].map((match) => Number(match[1]));

/** A page link's query (`older=…` or `newer=…`), or undefined when the page has no such link. */
const link = (html: string, id: number, name: "Older" | "Newer") =>
  new RegExp(`<a href="/dashboard/webhooks/${id}(\\?(?:older|newer)=\\d+)"[^>]*>\\s*${name}\\s*</a>`).exec(html)?.[1];

/** One delivery's card, as HTML: up to the next card or the end of the section. */
const card = (html: string, id: number) =>
  new RegExp(`data-testid="delivery-${id}"([\\s\\S]*?)(?:data-testid="delivery-|</section>)`).exec(html)?.[1] ?? "";

describe("an endpoint's 60 deliveries, on the owner's endpoint page", async () => {
  const shop = await createOwnerBusiness();
  const jar = await signedIn(shop);
  const box = receiverBox("owner-pages");
  const endpoint = await subscribe(shop.apiKey, box.url("/hooks"), ["lead.created"]);
  const { deliveryIds } = await deliveriesTo(shop.business, endpoint.id, 60);
  await consumeBatch(deliveryIds, Date.now());
  const newestFirst = [...deliveryIds].sort((a, b) => b - a);

  it("pages them 20, 20 and 20, newest first, with working Older and Newer links", async () => {
    const first = await page(jar, endpointPath(endpoint.id));
    await expect(first).toHaveStatus(200);
    expect(shownIds(first.html)).toEqual(newestFirst.slice(0, 20));
    expect(link(first.html, endpoint.id, "Newer")).toBeUndefined();
    const second = await page(jar, endpointPath(endpoint.id, link(first.html, endpoint.id, "Older")));
    expect(shownIds(second.html)).toEqual(newestFirst.slice(20, 40));
    const third = await page(jar, endpointPath(endpoint.id, link(second.html, endpoint.id, "Older")));
    expect(shownIds(third.html)).toEqual(newestFirst.slice(40, 60));
    expect(link(third.html, endpoint.id, "Older")).toBeUndefined();
    // Back the other way: the same pages, each still newest first.
    const back = await page(jar, endpointPath(endpoint.id, link(third.html, endpoint.id, "Newer")));
    expect(shownIds(back.html)).toEqual(newestFirst.slice(20, 40));
    const newest = await page(jar, endpointPath(endpoint.id, link(back.html, endpoint.id, "Newer")));
    expect(shownIds(newest.html)).toEqual(newestFirst.slice(0, 20));
    expect(link(newest.html, endpoint.id, "Newer")).toBeUndefined();
    expect(link(newest.html, endpoint.id, "Older")).toBeDefined();
  });

  it("shows each delivery's payload, pretty-printed, behind a Payload", async () => {
    const { html } = await page(jar, endpointPath(endpoint.id));
    const newest = card(html, newestFirst[0] ?? 0);
    expect(newest).toContain("<summary>Payload</summary>");
    const payload = testIdText(newest.replace(/^[^>]*>/, ""), "payload");
    expect(payload).toMatch(/^\{ "id": "evt_/);
    expect(payload).toContain('"n": 59');
    // One member a line, indented: the envelope as JSON.stringify(…, null, 2) writes it.
    expect(newest).toMatch(/<code>\{\n {2}&quot;id&quot;: /);
  });
});

describe("the receiver's answer, on each attempt that did not deliver", async () => {
  const shop = await createOwnerBusiness();
  const jar = await signedIn(shop);
  const box = receiverBox("owner-answers");
  // Failed answers with a body of the test's choosing: an attempt keeps the start of an answer that is not a 2xx.
  const failedWith = (body: string) => box.url(`/status/400/json/${encodeURIComponent(body)}`);
  const long = JSON.stringify({ note: `<b>bold</b><script>alert(1)</script>${"x".repeat(1_000)}` });
  const wide = JSON.stringify(`${"é".repeat(150)}${"😀".repeat(60)}`);
  const html = await subscribe(shop.apiKey, failedWith(long), ["lead.created"]);
  const utf8 = await subscribe(shop.apiKey, failedWith(wide), ["lead.created"]);
  const failing = await subscribe(shop.apiKey, box.url("/status/500"), ["lead.created"]);
  const huge = await subscribe(shop.apiKey, box.url("/status/500/bytes/1000000"), ["lead.created"]);
  const delivered = await subscribe(shop.apiKey, box.url(`/json/${encodeURIComponent(long)}`), ["lead.created"]);
  // Right-to-left override, pop, escape and NUL: what reorders or hides the text around it.
  const tricky = '{"status":"ok\u202Egnp.exe\u202C","raw":"\u001b[2J\u0000"}';
  const bidi = await subscribe(shop.apiKey, failedWith(tricky), ["lead.created"]);
  const ids = async (endpointId: number) => (await deliveriesTo(shop.business, endpointId, 1)).deliveryIds;
  const [htmlId = 0] = await ids(html.id);
  const [utf8Id = 0] = await ids(utf8.id);
  const [failingId = 0] = await ids(failing.id);
  const [hugeId = 0] = await ids(huge.id);
  const [bidiId = 0] = await ids(bidi.id);
  const [deliveredId = 0] = await ids(delivered.id);
  await consumeBatch([htmlId, utf8Id, failingId, hugeId, bidiId, deliveredId], Date.now());

  it("stores at most 200 characters of the answer in the attempt's row", async () => {
    const [attempt] = await attemptsOf(htmlId);
    expect(attempt?.answerExcerpt).toBe(long.slice(0, 200));
  });

  it("reads no more of a megabyte answer than its start: 200 characters kept, the delivery due again", async () => {
    const [attempt] = await attemptsOf(hugeId);
    expect(attempt?.statusCode).toBe(500);
    expect(attempt?.answerExcerpt).toBe(`"${"a".repeat(199)}`);
    expect((await deliveryRow(hugeId))?.status).toBe("pending");
  });

  it("keeps nothing of an answer that delivered: its status is the record, its body is dropped unread", async () => {
    const [attempt] = await attemptsOf(deliveredId);
    expect(attempt?.statusCode).toBe(200);
    expect(attempt?.answerExcerpt).toBeNull();
    expect((await deliveryRow(deliveredId))?.status).toBe("delivered");
    expect(card((await page(jar, endpointPath(delivered.id))).html, deliveredId)).not.toContain('data-testid="answer"');
  });

  it("cuts a UTF-8 answer at 200 whole characters, never inside one", async () => {
    const [attempt] = await attemptsOf(utf8Id);
    expect(Array.from(attempt?.answerExcerpt ?? "")).toHaveLength(200);
    expect(attempt?.answerExcerpt).toBe(Array.from(wide).slice(0, 200).join(""));
    expect(attempt?.answerExcerpt).not.toContain("\uFFFD");
  });

  it("shows the answer as escaped text, never as HTML", async () => {
    const shown = await page(jar, endpointPath(html.id));
    const answer = card(shown.html, htmlId);
    expect(answer).toContain("&lt;b&gt;bold&lt;/b&gt;&lt;script&gt;");
    expect(answer).not.toContain("<script>");
    expect(answer).not.toContain("<b>bold");
    expect(answer).toMatch(/<pre data-testid="answer"><code>/);
  });

  it("shows direction and control characters of the answer as their code points, never as they are", async () => {
    const [attempt] = await attemptsOf(bidiId);
    expect(attempt?.answerExcerpt).toContain("\u202E");
    const answer = card((await page(jar, endpointPath(bidi.id))).html, bidiId);
    expect(answer).toContain("ok⟨U+202E⟩gnp.exe⟨U+202C⟩");
    expect(answer).toContain("⟨U+001B⟩[2J⟨U+0000⟩");
    for (const hidden of ["\u202E", "\u202C", "\u001b", "\u0000"]) expect(answer).not.toContain(hidden);
  });

  it("shows a failed attempt's status and its answer", async () => {
    const shown = await page(jar, endpointPath(failing.id));
    const text = testIdText(shown.html, `delivery-${failingId}`);
    expect(text).toContain("500 — answered HTTP 500");
    expect(card(shown.html, failingId)).toContain("{&quot;status&quot;:500}");
    const [attempt] = await attemptsOf(failingId);
    expect(attempt?.answerExcerpt).toBe('{"status":500}');
  });
});

describe("test events and deliveries sent again, marked", async () => {
  const shop = await createOwnerBusiness();
  const jar = await signedIn(shop);
  const box = receiverBox("owner-marks");
  const endpoint = await subscribe(shop.apiKey, box.url("/hooks"), ["lead.created"]);
  const [plain = 0, again = 0] = (await deliveriesTo(shop.business, endpoint.id, 2)).deliveryIds;
  await consumeBatch([plain, again], Date.now());

  it("marks the partner's test event and the dashboard's ping Test, not an event of the business", async () => {
    const tested = await call(`/api/v1/webhooks/${endpoint.id}/test`, {
      key: shop.apiKey,
      method: "POST",
      body: { event: "lead.created" },
    });
    expect(tested.status).toBeLessThan(300);
    const path = endpointPath(endpoint.id);
    await expect(await submit(jar, path, `${path}/ping`)).toHaveStatus(303);
    await box.arrived(4);
    const { html } = await page(jar, path);
    const [ping = 0, test = 0] = shownIds(html);
    expect(card(html, ping)).toContain('<span class="tag">Test</span>');
    expect(card(html, test)).toContain('<span class="tag">Test</span>');
    expect(card(html, plain)).not.toContain(">Test</span>");
  });

  it("marks a delivery the owner sent again Sent again, with both attempts", async () => {
    const path = endpointPath(endpoint.id);
    const sent = await submit(jar, path, `${path}/deliveries/${again}/send-again`);
    await expect(sent).toHaveStatus(303);
    await vi.waitFor(async () => expect(await attemptsOf(again)).toHaveLength(2), { timeout: 10_000, interval: 100 });
    await vi.waitFor(async () => expect((await deliveryRow(again))?.extraAttemptAt).toBeNull());
    const { html } = await page(jar, path);
    expect(card(html, again)).toContain('<span class="tag">Sent again</span>');
    expect([...card(html, again).matchAll(/<li>/g)]).toHaveLength(2);
    expect(card(html, plain)).not.toContain("Sent again");
  });
});

describe("the events an endpoint receives, in words", async () => {
  const shop = await createOwnerBusiness();
  const jar = await signedIn(shop);
  const box = receiverBox("owner-words");
  const every = await subscribe(shop.apiKey, box.url("/every"), ["*"]);
  const some = await subscribe(shop.apiKey, box.url("/some"), ["booking.created", "booking.cancelled"]);

  it("reads `*` as every event except intake answers", async () => {
    const { html } = await page(jar, endpointPath(every.id));
    expect(html).toContain("Events: every event except intake answers");
  });

  it("reads a list of names as words, on the endpoint's page and in the list", async () => {
    const { html } = await page(jar, endpointPath(some.id));
    expect(html).toContain("Events: new bookings, cancelled bookings");
    const list = await page(jar, "/dashboard/webhooks");
    expect(testIdText(list.html, `endpoint-${some.id}`)).toContain("new bookings, cancelled bookings");
    expect(testIdText(list.html, `endpoint-${every.id}`)).toContain("every event except intake answers");
  });
});
