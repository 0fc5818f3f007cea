import { eq } from "drizzle-orm";
import { describe, expect, it, vi } from "vitest";
import { webhookEndpoints } from "../../src/db/schema";
import { timeText } from "../../src/routes/dashboard/time-text";
import { formsPostingTo, page, post, signedIn, submit, testIdText } from "../helpers/dashboard";
import { createBusiness, db } from "../helpers/fixtures";
import { connectApp, createOwnerBusiness } from "../helpers/oauth";
import { bookingObject, reportChange } from "../helpers/platform";
import { receiverBox } from "../helpers/receiver";
import { subscribe } from "../helpers/webhooks";

// docs/webhooks.md, Endpoint health, on the owner's side: the webhooks pages show each endpoint's status,
// why it was switched off and its last successful delivery, and the owner switches a disabled endpoint back on (the
// partner's `POST /webhooks/{id}/enable`, for any side of the business: Principals and ownership).

const endpointRow = async (id: number) => {
  const row = await db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, id)).get();
  if (!row) throw new Error(`no endpoint ${id}`);
  return row;
};

/** Switched off as the health rules would, without waiting for them (the 410 case below goes the real way). */
const disable = (id: number, reason: string | null = "The endpoint answered 410 Gone at 2030-01-07T10:00:00.000Z.") =>
  db.update(webhookEndpoints).set({ status: "disabled", disabledReason: reason }).where(eq(webhookEndpoints.id, id));

/** The list's row of an endpoint, as HTML: its tag's class says on or off. */
const listRow = (html: string, id: number) =>
  new RegExp(`<tr[^>]*data-testid="endpoint-${id}"[^>]*>([\\s\\S]*?)</tr>`).exec(html)?.[1] ?? "";

const switchOn = (id: number | string) => `/dashboard/webhooks/${id}/on`;
const NOT_FOUND = "No webhook endpoint with that id exists for this business.";

let nextBooking = 980_000;

/** Reports a new booking (the core platform's report): every endpoint subscribed to booking.created gets it. */
async function reportBooking(businessId: string) {
  const response = await reportChange(businessId, { booking: bookingObject(nextBooking++) });
  await expect(response).toHaveStatus(201);
}

const received = (box: ReturnType<typeof receiverBox>, count: number) =>
  vi.waitFor(async () => expect(await box.recorded()).toHaveLength(count), { timeout: 10_000, interval: 50 });

describe("an endpoint switched off by a 410 Gone, on the owner's webhooks pages", async () => {
  const shop = await createOwnerBusiness();
  const jar = await signedIn(shop);
  const goneBox = receiverBox("owner-gone");
  const aliveBox = receiverBox("owner-alive");
  const gone = await subscribe(shop.apiKey, goneBox.url("/status/410"), ["booking.created"]);
  const alive = await subscribe(shop.apiKey, aliveBox.url("/hooks"), ["booking.created"]);
  // Through the real queue, consumer and receiver: the first answers 410 and is switched off, the other succeeds.
  await reportBooking(shop.business.id);
  await received(goneBox, 1);
  await vi.waitFor(async () => expect((await endpointRow(gone.id)).status).toBe("disabled"));
  await vi.waitFor(async () => expect((await endpointRow(alive.id)).lastSuccessAt).not.toBeNull());

  it("tags each endpoint of the list On or Switched off", async () => {
    const list = await page(jar, "/dashboard/webhooks");
    await expect(list).toHaveStatus(200);
    expect(testIdText(list.html, `endpoint-${alive.id}`)).toMatch(/ On$/);
    expect(listRow(list.html, alive.id)).toContain('<span class="tag on">On</span>');
    expect(testIdText(list.html, `endpoint-${gone.id}`)).toMatch(/ Switched off$/);
    expect(listRow(list.html, gone.id)).toContain('<span class="tag off">Switched off</span>');
  });

  it("shows on the endpoint's page why it was switched off, that it never succeeded, and the switch back on", async () => {
    const { status, html } = await page(jar, `/dashboard/webhooks/${gone.id}`);
    expect(status).toBe(200);
    const health = testIdText(html, "health");
    // The reason's time is stored in UTC, as partners read it; the owner reads it in the business's zone.
    const goneAt = /answered 410 Gone at (\S+), so/.exec((await endpointRow(gone.id)).disabledReason ?? "")?.[1] ?? "";
    expect(goneAt).toMatch(/^\d{4}-\d{2}-\d{2}T[\d:.]+Z$/);
    expect(health).toMatch(/^Health Switched off Why it was switched off: .+ Last successful delivery: never /);
    expect(html).toContain(
      `The endpoint answered 410 Gone at <time datetime="${goneAt}">${timeText(goneAt, "Europe/Amsterdam", "second")}</time>, so it gets no new deliveries until it is enabled again.`,
    );
    expect(health).toContain("Switch back on");
    expect(formsPostingTo(html, switchOn(gone.id))).toBe(1);
    // Nothing can be sent to it while it is off: no Test, no Send again.
    expect(formsPostingTo(html, `/dashboard/webhooks/${gone.id}/ping`)).toBe(0);
    expect(html).not.toContain("/send-again");
    expect(testIdText(html, "notice")).toBe("");
  });

  it("shows an endpoint that works as On, with its last successful delivery, and no switch", async () => {
    const { html } = await page(jar, `/dashboard/webhooks/${alive.id}`);
    const lastSuccess = (await endpointRow(alive.id)).lastSuccessAt ?? "";
    expect(testIdText(html, "health")).toBe(
      // In the business's time zone (the fixtures' Europe/Amsterdam), to the second.
      `Health On Last successful delivery: ${timeText(lastSuccess, "Europe/Amsterdam", "second")}`,
    );
    expect(formsPostingTo(html, switchOn(alive.id))).toBe(0);
    expect(formsPostingTo(html, `/dashboard/webhooks/${alive.id}/ping`)).toBe(1);
  });

  it("switches it back on, says so, and it receives new events again", async () => {
    const firstReason = (await endpointRow(gone.id)).disabledReason;
    const switched = await submit(jar, `/dashboard/webhooks/${gone.id}`, switchOn(gone.id));
    await expect(switched).toHaveStatus(303);
    expect(switched.headers.get("Location")).toBe(`/dashboard/webhooks/${gone.id}?switched=on`);
    expect(await endpointRow(gone.id)).toMatchObject({ status: "enabled", disabledReason: null });

    const { html } = await page(jar, `/dashboard/webhooks/${gone.id}?switched=on`);
    expect(testIdText(html, "notice")).toContain("The endpoint is switched back on");
    expect(testIdText(html, "health")).toBe("Health On Last successful delivery: never");
    expect(formsPostingTo(html, switchOn(gone.id))).toBe(0);
    expect(listRow((await page(jar, "/dashboard/webhooks")).html, gone.id)).toContain(">On</span>");
    // The overview no longer lists it as switched off.
    expect(testIdText((await page(jar, "/dashboard")).html, "disabled-endpoints")).toBe("");

    // The next event reaches it; it still answers 410, so it is switched off again (docs/webhooks.md, Endpoint health).
    await reportBooking(shop.business.id);
    await received(goneBox, 2);
    await received(aliveBox, 2);
    await vi.waitFor(async () => expect((await endpointRow(gone.id)).status).toBe("disabled"));
    const again = await page(jar, `/dashboard/webhooks/${gone.id}?switched=on`);
    // The notice claims nothing once the endpoint is off again.
    expect(testIdText(again.html, "notice")).toBe("");
    expect(testIdText(again.html, "health")).toContain("Switched off Why it was switched off:");
    // Off anew, for the new 410 (a later time in its reason), not left off from before.
    expect((await endpointRow(gone.id)).disabledReason).not.toBe(firstReason);
  });
});

describe("switching an endpoint back on: who may, and how", async () => {
  const shop = await createOwnerBusiness();
  const jar = await signedIn(shop);
  const app = await connectApp(shop);
  const stranger = await createBusiness();

  it("switches on an endpoint an app added, whoever added it", async () => {
    const endpoint = await subscribe(app.tokens.access_token, "https://partner.example/app-side");
    await disable(endpoint.id);
    const switched = await submit(jar, `/dashboard/webhooks/${endpoint.id}`, switchOn(endpoint.id));
    await expect(switched).toHaveStatus(303);
    expect(await endpointRow(endpoint.id)).toMatchObject({ status: "enabled", disabledReason: null });
  });

  it("shows a disabled endpoint without a stored reason with its status and switch alone", async () => {
    const endpoint = await subscribe(shop.apiKey, "https://partner.example/no-reason");
    await disable(endpoint.id, null);
    const { html } = await page(jar, `/dashboard/webhooks/${endpoint.id}`);
    expect(testIdText(html, "health")).toMatch(/^Health Switched off Last successful delivery: never /);
    expect(formsPostingTo(html, switchOn(endpoint.id))).toBe(1);
  });

  it("refuses a switch without the session's CSRF token, and changes nothing", async () => {
    const endpoint = await subscribe(shop.apiKey, "https://partner.example/csrf");
    await disable(endpoint.id);
    const refused = await post(jar, switchOn(endpoint.id));
    await expect(refused).toHaveStatus(403);
    expect(await refused.text()).toContain("This form was not sent from your dashboard");
    const forged = await post(jar, switchOn(endpoint.id), { csrf_token: "not-the-session-token" });
    await expect(forged).toHaveStatus(403);
    expect((await endpointRow(endpoint.id)).status).toBe("disabled");
  });

  it("answers 404 for another business's endpoint or an id that is none, and switches nothing on", async () => {
    const theirs = await subscribe(stranger.apiKey, "https://partner.example/theirs");
    await disable(theirs.id);
    await expect(await page(jar, `/dashboard/webhooks/${theirs.id}`)).toHaveStatus(404);
    const refused = await submit(jar, "/dashboard/webhooks", switchOn(theirs.id));
    await expect(refused).toHaveStatus(404);
    expect(await refused.text()).toContain(NOT_FOUND);
    expect(await endpointRow(theirs.id)).toMatchObject({ status: "disabled", disabledReason: expect.any(String) });
    for (const id of ["abc", "0", "99999999999999999999"]) {
      await expect(await submit(jar, "/dashboard/webhooks", switchOn(id))).toHaveStatus(404);
    }
  });
});
