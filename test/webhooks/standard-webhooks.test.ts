import { encodeBase64url } from "@oslojs/encoding";
import { eq } from "drizzle-orm";
import { Webhook } from "standardwebhooks";
import Stripe from "stripe";
import { describe, expect, it } from "vitest";
import { actions, webhookEndpoints } from "../../src/db/schema";
import { callActionByName, testAction } from "../../src/domain/actions/calls";
import { switchAction } from "../../src/domain/actions/owner-decisions";
import { findAction } from "../../src/domain/actions/reads";
import { newSigningSecret } from "../../src/lib/signing";
import { registerAction } from "../helpers/actions";
import { deps } from "../helpers/dependencies";
import { createBusiness, db } from "../helpers/fixtures";
import { call, json, RUNTIME } from "../helpers/http";
import { bookingObject, reportChange } from "../helpers/platform";
import { receiverBox } from "../helpers/receiver";
import { verifyStandardWebhook, verifyWebhookSignature } from "../helpers/verify-signature";
import { consume, outboxOnly, subscribe } from "../helpers/webhooks";
import type { RecordedRequest } from "../recorded-request";

// docs/webhooks.md, The signatures and Rotating a secret. Every request here is a real one: deliveries
// through the queue consumer (the real queue, or the consumer run on a clock the test drives), action calls through
// the runtime's route or its domain call on a driven clock, all received by the real test receiver and verified with
// the real `stripe` and `standardwebhooks` packages and the WebCrypto examples of docs/webhooks.md.

const stripe = new Stripe("sk_test_unused");
const subtleCrypto = Stripe.createSubtleCryptoProvider();

const SERVICE_SIGNATURE = (count: number) => new RegExp(`^t=(\\d{10})${",v1=[0-9a-f]{64}".repeat(count)}$`);
const STANDARD_SIGNATURE = (count: number) =>
  new RegExp(`^${Array.from({ length: count }, () => "v1,[A-Za-z0-9+/]{43}=").join(" ")}$`);

type Verdicts = { stripe: boolean; standardWebhooks: boolean; webCrypto: boolean; webCryptoStandard: boolean };
const ALL: Verdicts = { stripe: true, standardWebhooks: true, webCrypto: true, webCryptoStandard: true };
const NONE: Verdicts = { stripe: false, standardWebhooks: false, webCrypto: false, webCryptoStandard: false };

const succeeds = async (verification: () => unknown) => {
  try {
    await verification();
    return true;
  } catch {
    return false;
  }
};

/**
 * Whether each way of docs/webhooks.md accepts the request under `secret`: stripe-node and standardwebhooks called
 * exactly as the documented handlers call them, and the two WebCrypto functions.
 */
async function verdicts({ body, headers: recorded }: RecordedRequest, secret: string): Promise<Verdicts> {
  const request = { headers: new Headers(recorded) };
  return {
    stripe: await succeeds(() =>
      stripe.webhooks.constructEventAsync(
        body,
        request.headers.get("X-Service-Signature") ?? "",
        secret,
        300,
        subtleCrypto,
      ),
    ),
    standardWebhooks: await succeeds(() => new Webhook(secret).verify(body, Object.fromEntries(request.headers))),
    webCrypto: await verifyWebhookSignature(body, request.headers.get("X-Service-Signature") ?? "", secret),
    webCryptoStandard: await verifyStandardWebhook(body, request.headers, secret),
  };
}

/** The request with only the `i`-th signature of each header (sent in order: the current secret's first). */
function withOnlySignature(request: RecordedRequest, i: number): RecordedRequest {
  const service = (request.headers["x-service-signature"] ?? "").split(",").slice(1);
  const standard = (request.headers["webhook-signature"] ?? "").split(" ");
  return {
    ...request,
    headers: {
      ...request.headers,
      "x-service-signature": `t=${request.headers["webhook-timestamp"]},${service[i]}`,
      "webhook-signature": standard[i] ?? "",
    },
  };
}

/**
 * docs/webhooks.md, Rotating a secret. A request made while the previous secret still signs carries two
 * signatures of each kind, the new secret's first (`v1=<new>,v1=<old>` and `v1,<new> v1,<old>`); it verifies under
 * either secret, and each signature under its own.
 */
async function expectSignedByBoth(request: RecordedRequest, secret: string, previous: string) {
  expect(request.headers["x-service-signature"]).toMatch(SERVICE_SIGNATURE(2));
  expect(request.headers["webhook-signature"]).toMatch(STANDARD_SIGNATURE(2));
  expect(await verdicts(request, secret)).toEqual(ALL);
  expect(await verdicts(request, previous)).toEqual(ALL);
  expect(await verdicts(withOnlySignature(request, 0), secret)).toEqual(ALL);
  expect(await verdicts(withOnlySignature(request, 1), previous)).toEqual(ALL);
}

/** `POST /api/v1/{path}/rotate-secret`: the new secret. */
async function rotated(apiKey: string, path: string, body?: unknown) {
  const response = await call(`/api/v1/${path}/rotate-secret`, { key: apiKey, method: "POST", body });
  await expect(response).toHaveStatus(200);
  return (await json<{ secret: string }>(response)).secret;
}

/**
 * A secret of the form endpoints had before Standard Webhooks: `whsec_` (or an action's `actsec_`) + base64url, with at
 * least one of base64url's own characters (`-`, `_`), as about 3 in 4 of them have: the Standard Webhooks libraries
 * refuse to decode those, which the tests below show. One without them decodes, to another key, and fails to verify.
 */
function olderSecret(prefix: "whsec_" | "actsec_"): string {
  for (;;) {
    const encoded = encodeBase64url(crypto.getRandomValues(new Uint8Array(32))).replace(/=+$/, "");
    if (/[-_]/.test(encoded)) return `${prefix}${encoded}`;
  }
}

describe("Standard Webhooks headers on a delivery through the real queue", async () => {
  const { business, apiKey } = await createBusiness({ name: "Standard Hooks" });
  const box = receiverBox("std-queue");
  const endpoint = await subscribe(apiKey, box.url("/hooks"));

  it("carries webhook-id (the envelope id), webhook-timestamp (the t of X-Service-Signature) and webhook-signature", async () => {
    const response = await reportChange(business.id, { booking: bookingObject(8101, { conversation_id: "c1" }) });
    await expect(response).toHaveStatus(201);
    const [{ id: eventId }] = (await json<{ events: [{ id: string }] }>(response)).events;
    const [request] = (await box.arrived(1)) as [RecordedRequest];
    const t = SERVICE_SIGNATURE(1).exec(request.headers["x-service-signature"] ?? "")?.[1];
    expect(t).toBeDefined();
    expect(request.headers).toMatchObject({
      "x-service-event": "booking.created",
      "webhook-id": eventId,
      "webhook-timestamp": t,
      "webhook-signature": expect.stringMatching(STANDARD_SIGNATURE(1)),
    });
    expect(JSON.parse(request.body).id).toBe(eventId);

    expect(await verdicts(request, endpoint.secret)).toEqual(ALL);
    expect(new Webhook(endpoint.secret).verify(request.body, request.headers)).toMatchObject({ id: eventId });
    expect(await verdicts(request, newSigningSecret())).toEqual(NONE);
    expect(await verdicts({ ...request, body: request.body.replace("booking", "b00king") }, endpoint.secret)).toEqual(
      NONE,
    );
    // A webhook-id other than the one signed is refused: it is part of what webhook-signature covers.
    const otherId = { ...request, headers: { ...request.headers, "webhook-id": "evt_other" } };
    expect((await verdicts(otherId, endpoint.secret)).standardWebhooks).toBe(false);
    expect((await verdicts(otherId, endpoint.secret)).webCryptoStandard).toBe(false);
  });
});

/** A business with one endpoint on a box of its own; its deliveries are attempted by the real consumer at `now`. */
async function endpointOf(name: string) {
  const { business, apiKey } = await createBusiness();
  const box = receiverBox(name);
  const endpoint = await subscribe(apiKey, box.url("/hooks"));
  const written = async () => {
    const { deliveryIds } = await outboxOnly(business, [{ event: "lead.created", data: { lead: { id: name } } }]);
    return deliveryIds[0] ?? 0;
  };
  const attempted = async (deliveryId: number, now: number) => {
    expect(await consume(deliveryId, now)).toEqual({ acked: true, retryDelay: undefined });
    return (await box.recorded()).at(-1) as RecordedRequest;
  };
  const previousExpiry = async () => {
    const row = await db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, endpoint.id)).get();
    return Date.parse(row?.previousSecretExpiresAt ?? "");
  };
  return {
    apiKey,
    endpoint,
    path: `webhooks/${endpoint.id}`,
    written,
    attempted,
    deliverAt: async (now: number) => attempted(await written(), now),
    previousExpiry,
  };
}

describe("a rotation of an endpoint's secret, as its receiver sees it", () => {
  it("before: one signature of each kind; during: the new and the old secret both verify, the new one's first; after its expiry: only the new one", async () => {
    const { apiKey, endpoint, path, deliverAt, previousExpiry } = await endpointOf("rotation");
    const before = await deliverAt(Date.now());
    expect(before.headers["x-service-signature"]).toMatch(SERVICE_SIGNATURE(1));
    expect(before.headers["webhook-signature"]).toMatch(STANDARD_SIGNATURE(1));
    expect(await verdicts(before, endpoint.secret)).toEqual(ALL);

    const secret = await rotated(apiKey, path, { expires_in: 120 });
    expect(await verdicts(before, secret)).toEqual(NONE);
    const expiresAt = await previousExpiry();

    const during = await deliverAt(Date.now());
    await expectSignedByBoth(during, secret, endpoint.secret);
    expect(await verdicts(withOnlySignature(during, 0), endpoint.secret)).toEqual(NONE);

    // The consumer's clock at the last millisecond of the old secret, then at its expiry.
    const lastMoment = await deliverAt(expiresAt - 1);
    expect(await verdicts(lastMoment, endpoint.secret)).toEqual(ALL);
    const after = await deliverAt(expiresAt);
    expect(after.headers["x-service-signature"]).toMatch(SERVICE_SIGNATURE(1));
    expect(after.headers["webhook-signature"]).toMatch(STANDARD_SIGNATURE(1));
    expect(await verdicts(after, secret)).toEqual(ALL);
    expect(await verdicts(after, endpoint.secret)).toEqual(NONE);
  });

  it("signs a delivery written before the rotation with the secrets of the moment it is attempted", async () => {
    const { apiKey, endpoint, path, written, attempted } = await endpointOf("pending");
    const deliveryId = await written();
    const secret = await rotated(apiKey, path, { expires_in: 0 });
    const request = await attempted(deliveryId, Date.now());
    expect(await verdicts(request, secret)).toEqual(ALL);
    expect(await verdicts(request, endpoint.secret)).toEqual(NONE);
  });

  it("with expires_in 0, stops signing with the old secret at once", async () => {
    const { apiKey, endpoint, path, deliverAt } = await endpointOf("at-once");
    const secret = await rotated(apiKey, path, { expires_in: 0 });
    const request = await deliverAt(Date.now());
    expect(request.headers["x-service-signature"]).toMatch(SERVICE_SIGNATURE(1));
    expect(request.headers["webhook-signature"]).toMatch(STANDARD_SIGNATURE(1));
    expect(await verdicts(request, secret)).toEqual(ALL);
    expect(await verdicts(request, endpoint.secret)).toEqual(NONE);
  });

  it("keeps only the current and the newest previous secret: a rotation during another drops the oldest", async () => {
    const { apiKey, endpoint, path, deliverAt } = await endpointOf("twice");
    const second = await rotated(apiKey, path, { expires_in: 3600 });
    const third = await rotated(apiKey, path);
    const request = await deliverAt(Date.now());
    expect(request.headers["x-service-signature"]).toMatch(SERVICE_SIGNATURE(2));
    expect(await verdicts(request, third)).toEqual(ALL);
    expect(await verdicts(request, second)).toEqual(ALL);
    expect(await verdicts(request, endpoint.secret)).toEqual(NONE);
  });

  it("of two rotations at once, one secret is current and the other previous: both verify the next delivery", async () => {
    const { apiKey, endpoint, path, deliverAt } = await endpointOf("concurrent");
    const [a, b] = await Promise.all([rotated(apiKey, path), rotated(apiKey, path)]);
    expect(a).not.toBe(b);
    const request = await deliverAt(Date.now());
    expect(request.headers["x-service-signature"]).toMatch(SERVICE_SIGNATURE(2));
    expect(await verdicts(request, a)).toEqual(ALL);
    expect(await verdicts(request, b)).toEqual(ALL);
    expect(await verdicts(request, endpoint.secret)).toEqual(NONE);
  });
});

describe("secrets of the older form, still in databases", () => {
  it("an endpoint's whsec_ + base64url secret keeps verifying, and keys webhook-signature by its UTF-8 bytes", async () => {
    const { apiKey, endpoint, path, deliverAt } = await endpointOf("older");
    const older = olderSecret("whsec_");
    await db.update(webhookEndpoints).set({ secret: older }).where(eq(webhookEndpoints.id, endpoint.id));
    const request = await deliverAt(Date.now());
    // The Standard Webhooks libraries refuse to decode it (base64url), but take it as a raw key: docs/webhooks.md.
    expect(await verdicts(request, older)).toEqual({ ...ALL, standardWebhooks: false });
    expect(() => new Webhook(older)).toThrow();
    expect(new Webhook(older, { format: "raw" }).verify(request.body, request.headers)).toMatchObject({
      event: "lead.created",
    });

    // A rotation gives a secret of the current form; the older one verifies beside it until it expires.
    const secret = await rotated(apiKey, path, { expires_in: 600 });
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const during = await deliverAt(Date.now());
    expect(await verdicts(during, secret)).toEqual(ALL);
    expect(await verdicts(during, older)).toEqual({ ...ALL, standardWebhooks: false });
    expect(new Webhook(older, { format: "raw" }).verify(during.body, during.headers)).toBeTruthy();
  });
});

describe("Standard Webhooks headers on action calls, and a rotation of an action's secret", async () => {
  const { business, apiKey } = await createBusiness();

  async function actionOf(name: string) {
    const box = receiverBox(name);
    const action = await registerAction(apiKey, name, { url: box.url() });
    await switchAction(deps, business.id, action.id, true);
    const body = () => ({
      conversation_id: "conv-7",
      message_id: crypto.randomUUID(),
      channel: "whatsapp" as const,
      arguments: {},
    });
    /** The runtime's call through its route (the real clock), or on a clock the test drives. */
    const callAt = async (now?: number) => {
      const answer = now
        ? await callActionByName(deps, business.id, name, body(), { now: () => now })
        : await json<{ call: { id: number } }>(
            await call(`/internal/v1/businesses/${business.id}/actions/${name}/call`, {
              method: "POST",
              headers: RUNTIME,
              body: body(),
            }),
          );
      const request = (await box.recorded()).at(-1) as RecordedRequest;
      return { callId: answer.call.id, request };
    };
    const previousExpiry = async () => {
      const row = await db.select().from(actions).where(eq(actions.id, action.id)).get();
      return Date.parse(row?.previousSecretExpiresAt ?? "");
    };
    return { action, box, path: `actions/${action.id}`, callAt, previousExpiry };
  }

  it("carry webhook-id (the call id) and webhook-timestamp (t), and verify three ways; the owner's Test button too", async () => {
    const { action, box, callAt } = await actionOf("check_stock");
    const { callId, request } = await callAt();
    const t = SERVICE_SIGNATURE(1).exec(request.headers["x-service-signature"] ?? "")?.[1];
    expect(request.headers).toMatchObject({
      "x-service-call": String(callId),
      "webhook-id": String(callId),
      "webhook-timestamp": t,
      "webhook-signature": expect.stringMatching(STANDARD_SIGNATURE(1)),
    });
    expect(await verdicts(request, action.secret)).toEqual(ALL);

    const tested = await testAction(deps, business, await findAction(deps, business.id, action.id), {});
    const [, ofTest] = (await box.recorded()) as [RecordedRequest, RecordedRequest];
    expect(ofTest.headers["webhook-id"]).toBe(String(tested.call.id));
    expect(await verdicts(ofTest, action.secret)).toEqual(ALL);
  });

  it("before, during and after a rotation: both secrets verify until the previous one expires, then only the new one", async () => {
    const { action, path, callAt, previousExpiry } = await actionOf("book_table");
    expect(await verdicts((await callAt()).request, action.secret)).toEqual(ALL);

    const secret = await rotated(apiKey, path, { expires_in: 120 });
    const expiresAt = await previousExpiry();
    const { request: during } = await callAt();
    await expectSignedByBoth(during, secret, action.secret);

    expect(await verdicts((await callAt(expiresAt - 1)).request, action.secret)).toEqual(ALL);
    const { request: after } = await callAt(expiresAt);
    expect(after.headers["x-service-signature"]).toMatch(SERVICE_SIGNATURE(1));
    expect(await verdicts(after, secret)).toEqual(ALL);
    expect(await verdicts(after, action.secret)).toEqual(NONE);
  });

  it("an action's actsec_ secret of the older form keys both signatures by its UTF-8 bytes", async () => {
    const { action, path, callAt } = await actionOf("older_action");
    const older = olderSecret("actsec_");
    await db.update(actions).set({ secret: older }).where(eq(actions.id, action.id));
    const { request } = await callAt();
    expect(await verdicts(request, older)).toEqual({ ...ALL, standardWebhooks: false });
    expect(new Webhook(older, { format: "raw" }).verify(request.body, request.headers)).toMatchObject({
      action: "older_action",
    });
    const secret = await rotated(apiKey, path, { expires_in: 0 });
    const { request: after } = await callAt();
    expect(await verdicts(after, secret)).toEqual(ALL);
    expect(await verdicts(after, older)).toEqual(NONE);
  });
});
