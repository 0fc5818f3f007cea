import { describe, expect, it, vi } from "vitest";
import {
  createPartnerClient,
  type HeadersLike,
  unwrap,
  verifySignedRequest,
  verifyWebhook,
  type WebhookEvent,
  WebhookVerificationError,
} from "../../sdk/src/index";
import { signatureHeaders } from "../../src/lib/signing";
import { createBusiness } from "../helpers/fixtures";
import { BASE, dispatch } from "../helpers/http";
import { bookingObject, reportChange } from "../helpers/platform";
import { receiverBox } from "../helpers/receiver";

// The SDK's verifyWebhook (sdk/src/webhooks.ts) on real deliveries of the Worker, through the real queue to the test
// receiver: either signature scheme verifies (docs/webhooks.md, The signatures), each refusal has its reason, and a
// rotation's previous secret verifies until it expires (docs/webhooks.md, Rotating a secret).

const STANDARD = ["webhook-id", "webhook-timestamp", "webhook-signature"];
const without = (headers: Record<string, string>, names: string[]) =>
  Object.fromEntries(Object.entries(headers).filter(([name]) => !names.includes(name.toLowerCase())));
const onlyStripe = (headers: Record<string, string>) => without(headers, STANDARD);
const onlyStandard = (headers: Record<string, string>) => without(headers, ["x-service-signature"]);

/** The reason a verification was refused with, or "verified". */
async function reasonOf(rawBody: string, headers: HeadersLike, secrets: string | string[], now?: number) {
  try {
    await verifyWebhook(rawBody, headers, secrets, now === undefined ? {} : { now });
    return "verified";
  } catch (error) {
    if (!(error instanceof WebhookVerificationError)) throw error;
    return error.reason;
  }
}

/** What a receiver makes of an event: `data` is typed by the event's name. */
function bookingIdOf(event: WebhookEvent): number | undefined {
  switch (event.event) {
    case "booking.created":
    case "booking.cancelled":
      return event.data.booking.id;
    default:
      return undefined;
  }
}

describe("verifyWebhook on the Worker's deliveries", async () => {
  const { business, apiKey } = await createBusiness();
  const client = createPartnerClient(apiKey, { baseUrl: `${BASE}/api/v1`, fetch: (request) => dispatch(request) });
  const box = receiverBox("sdk-webhooks");
  const endpoint = await unwrap(
    client.POST("/webhooks", { body: { url: box.url("/hooks"), events: ["booking.created"] } }),
  );
  await expect(await reportChange(business.id, { booking: bookingObject(95_001) })).toHaveStatus(201);
  const [delivery] = await box.arrived(1);
  const body = delivery?.body ?? "";
  const headers = delivery?.headers ?? {};
  const t = Number(headers["webhook-timestamp"]);
  /** The delivery to the endpoint of the booking `id`'s event (the box also holds other endpoints' deliveries). */
  const deliveryOf = async (id: number) => {
    const requests = await vi.waitFor(
      async () => {
        const found = (await box.recorded()).filter(
          (each) => each.path.endsWith("/hooks") && each.body.includes(`"id":${id},`),
        );
        if (found.length === 0) throw new Error(`booking ${id} not delivered yet`);
        return found;
      },
      { timeout: 10_000, interval: 100 },
    );
    return requests[0];
  };

  it("verifies with both schemes and answers the event, typed by its name", async () => {
    const event = await verifyWebhook(body, new Headers(headers), endpoint.secret);
    expect(event.event).toBe("booking.created");
    expect(bookingIdOf(event)).toBe(95_001);
    expect(event.business.id).toBe(business.id);
    expect(await verifySignedRequest(body, headers, endpoint.secret)).toBe("standard-webhooks");
    expect(await verifySignedRequest(body, onlyStandard(headers), endpoint.secret)).toBe("standard-webhooks");
    expect(await verifySignedRequest(body, onlyStripe(headers), endpoint.secret)).toBe("x-service-signature");
    expect(await verifyWebhook(body, onlyStripe(headers), endpoint.secret)).toEqual(event);
  });

  it.each([
    ["Standard Webhooks", onlyStandard],
    ["X-Service-Signature", onlyStripe],
  ])(
    "%s: refuses a tampered body, a wrong secret and an old timestamp, each with its reason",
    async (_scheme, pick) => {
      const signed = pick(headers);
      const tampered = body.replace("95001", "95002");
      expect(tampered).not.toBe(body);
      expect(await reasonOf(tampered, signed, endpoint.secret)).toBe("no_matching_signature");
      const other = await unwrap(client.POST("/webhooks", { body: { url: box.url("/other") } }));
      expect(await reasonOf(body, signed, other.secret)).toBe("no_matching_signature");
      // 301 s after the signature (and before it): outside the 300 s tolerance either way; 300 s is within it.
      expect(await reasonOf(body, signed, endpoint.secret, (t + 301) * 1000)).toBe("timestamp_outside_tolerance");
      expect(await reasonOf(body, signed, endpoint.secret, (t - 301) * 1000)).toBe("timestamp_outside_tolerance");
      expect(await reasonOf(body, signed, endpoint.secret, (t + 300) * 1000)).toBe("verified");
      const strict = verifyWebhook(body, signed, endpoint.secret, {
        toleranceSeconds: 10,
        now: new Date((t + 11) * 1000),
      });
      await expect(strict).rejects.toMatchObject({ reason: "timestamp_outside_tolerance" });
    },
  );

  it("refuses a request without either scheme's headers, or with a timestamp that is not unix seconds", async () => {
    expect(await reasonOf(body, {}, endpoint.secret)).toBe("missing_headers");
    expect(await reasonOf(body, without(headers, [...STANDARD, "x-service-signature"]), endpoint.secret)).toBe(
      "missing_headers",
    );
    // Two of the three Standard Webhooks headers are not that scheme, and no X-Service-Signature is left.
    expect(await reasonOf(body, without(headers, ["x-service-signature", "webhook-id"]), endpoint.secret)).toBe(
      "missing_headers",
    );
    const error = await verifyWebhook(body, {}, endpoint.secret).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(WebhookVerificationError);
    expect((error as Error).message).toMatch(/X-Service-Signature/);
    expect(await reasonOf(body, { ...onlyStandard(headers), "webhook-timestamp": "soon" }, endpoint.secret)).toBe(
      "malformed_headers",
    );
    const noT = { "X-Service-Signature": (headers["x-service-signature"] ?? "").replace(/^t=\d+,/, "") };
    expect(await reasonOf(body, noT, endpoint.secret)).toBe("malformed_headers");
  });

  it("during a rotation, verifies with the previous secret and with the new one, until the previous expires", async () => {
    const rotated = await unwrap(
      client.POST("/webhooks/{id}/rotate-secret", {
        params: { path: { id: endpoint.id } },
        body: { expires_in: 3600 },
      }),
    );
    await expect(await reportChange(business.id, { booking: bookingObject(95_010) })).toHaveStatus(201);
    const next = await deliveryOf(95_010);
    const signed = next?.headers ?? {};
    for (const pick of [onlyStandard, onlyStripe]) {
      for (const secrets of [endpoint.secret, rotated.secret, [rotated.secret, endpoint.secret]]) {
        const event = await verifyWebhook(next?.body ?? "", pick(signed), secrets);
        expect(bookingIdOf(event)).toBe(95_010);
      }
    }
    // Rotated again with expires_in 0: the secret before stops at once, and only the newest verifies.
    const stopped = await unwrap(
      client.POST("/webhooks/{id}/rotate-secret", { params: { path: { id: endpoint.id } }, body: { expires_in: 0 } }),
    );
    await expect(await reportChange(business.id, { booking: bookingObject(95_011) })).toHaveStatus(201);
    const last = await deliveryOf(95_011);
    expect(await reasonOf(last?.body ?? "", last?.headers ?? {}, rotated.secret)).toBe("no_matching_signature");
    expect(await reasonOf(last?.body ?? "", last?.headers ?? {}, [rotated.secret, stopped.secret])).toBe("verified");
  });
});

// Requests signed by the service's own signing (src/lib/signing.ts) for what a delivery does not show: an older
// secret's form, Node's header object, and a body that is not JSON.
describe("verifyWebhook on signed requests of every form", () => {
  const now = Date.now();
  const seconds = Math.floor(now / 1000);

  it("verifies an older secret (actsec_, whsec_ base64url), keyed by its UTF-8 bytes in both schemes", async () => {
    for (const secret of [
      "actsec_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_abcde",
      "whsec_AbCdEf-_0123456789AbCdEfGhIjKlMnOpQrStUvW",
    ]) {
      const signed = await signatureHeaders([secret], "evt_old", '{"event":"ping"}', seconds);
      expect(await verifySignedRequest('{"event":"ping"}', onlyStandard(signed), secret, { now })).toBe(
        "standard-webhooks",
      );
      expect(await verifySignedRequest('{"event":"ping"}', onlyStripe(signed), secret, { now })).toBe(
        "x-service-signature",
      );
    }
  });

  it("reads Node's header object (lowercase names, a value that is a list) and a verified body that is not JSON", async () => {
    const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw2L3tzVyhS+c=";
    const signed = await signatureHeaders([secret], "evt_node", "[1,2]", seconds);
    const node = { ...Object.fromEntries(Object.entries(signed).map(([name, value]) => [name.toLowerCase(), value])) };
    expect(await reasonOf("[1,2]", { ...node, "x-forwarded-for": ["10.0.0.1"] }, secret, now)).toBe("invalid_body");
    expect(await reasonOf("not json", node, secret, now)).toBe("no_matching_signature");
    await expect(verifyWebhook("{}", node, [])).rejects.toThrow(TypeError);
  });
});
