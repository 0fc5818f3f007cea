import { describe, expect, it } from "vitest";
import {
  type ActionCall,
  createPartnerClient,
  unwrap,
  verifyActionCall,
  verifySignedRequest,
  WebhookVerificationError,
} from "../../sdk/src/index";
import { switchAction } from "../../src/domain/actions/owner-decisions";
import { testDependencies } from "../helpers/dependencies";
import { createBusiness } from "../helpers/fixtures";
import { BASE, call, dispatch, json } from "../helpers/http";
import { receiverBox } from "../helpers/receiver";

// The SDK's verifyActionCall (sdk/src/actions.ts) on a real call of an action, made as the Secretary makes it through
// the sandbox route (docs/guides/sandbox.md): signed like a delivery with the action's secret (docs/webhooks.md, Action
// calls), and its body of the type the SDK declares, member for member.

/** Every member of the call's body and of its objects: `satisfies` fails the type check if the SDK's type differs. */
const CALL_MEMBERS = {
  call_id: true,
  action: true,
  arguments: true,
  business: true,
  conversation: true,
  created_at: true,
} satisfies Record<keyof ActionCall, true>;
const BUSINESS_MEMBERS = { id: true, handle: true } satisfies Record<keyof ActionCall["business"], true>;
const CONVERSATION_MEMBERS = { id: true, channel: true } satisfies Record<keyof ActionCall["conversation"], true>;
const sorted = (members: object) => Object.keys(members).sort();

describe("verifyActionCall on a real call of an action", async () => {
  const { business, apiKey, shard } = await createBusiness({ sandbox: true });
  const client = createPartnerClient(apiKey, { baseUrl: `${BASE}/api/v1`, fetch: (request) => dispatch(request) });
  const box = receiverBox("sdk-action");
  const action = await unwrap(
    client.POST("/actions", {
      body: {
        name: "check_stock",
        title: "Check stock",
        description: "Tells whether a product is in stock today.",
        url: box.url("/ok"),
        parameters: {
          type: "object",
          properties: {
            sku: { type: "string", description: "The product code" },
            quantity: { type: "integer", description: "How many" },
          },
          required: ["sku"],
        },
      },
    }),
  );
  await switchAction(testDependencies(shard), business.id, action.id, true);
  const answered = await call(`/api/v1/sandbox/actions/${action.id}/calls`, {
    key: apiKey,
    method: "POST",
    body: { arguments: { sku: "LOAF-2", quantity: 3 } },
  });
  await expect(answered).toHaveStatus(200);
  const made = await json<{ call: { id: number } }>(answered);
  const [request] = await box.arrived(1);
  const body = request?.body ?? "";
  const headers = request?.headers ?? {};

  it("verifies the call and answers its body, typed with the action's parameters", async () => {
    const verified = await verifyActionCall<{ sku: string; quantity?: number }>(body, headers, action.secret);
    expect(verified).toEqual({
      call_id: made.call.id,
      action: "check_stock",
      arguments: { sku: "LOAF-2", quantity: 3 },
      business: { id: business.id, handle: business.handle },
      conversation: { id: expect.any(String), channel: "chat_page" },
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
    const sku: string = verified.arguments.sku;
    expect(sku).toBe("LOAF-2");
    // The call id is in the body, in X-Service-Call and in webhook-id.
    expect(headers["x-service-call"]).toBe(String(made.call.id));
    expect(headers["webhook-id"]).toBe(String(made.call.id));
  });

  it("has exactly the members of the SDK's ActionCall type", () => {
    const sent = JSON.parse(body);
    expect(sorted(sent)).toEqual(sorted(CALL_MEMBERS));
    expect(sorted(sent.business)).toEqual(sorted(BUSINESS_MEMBERS));
    expect(sorted(sent.conversation)).toEqual(sorted(CONVERSATION_MEMBERS));
    expect(typeof sent.call_id).toBe("number");
  });

  it("verifies with either scheme alone", async () => {
    const stripe = { "x-service-signature": headers["x-service-signature"] ?? "" };
    expect(await verifySignedRequest(body, stripe, action.secret)).toBe("x-service-signature");
    const { "x-service-signature": _, ...standard } = headers;
    expect(await verifySignedRequest(body, standard, action.secret)).toBe("standard-webhooks");
  });

  it("refuses a tampered call, another secret and an old one, with their reasons", async () => {
    const tampered = body.replace("LOAF-2", "LOAF-9");
    expect(tampered).not.toBe(body);
    const refusal = (pending: Promise<unknown>) =>
      pending.then(
        () => "verified",
        (error: unknown) => (error instanceof WebhookVerificationError ? error.reason : error),
      );
    expect(await refusal(verifyActionCall(tampered, headers, action.secret))).toBe("no_matching_signature");
    const other = await unwrap(client.POST("/webhooks", { body: { url: box.url("/elsewhere") } }));
    expect(await refusal(verifyActionCall(body, headers, other.secret))).toBe("no_matching_signature");
    const later = (Number(headers["webhook-timestamp"]) + 3600) * 1000;
    expect(await refusal(verifyActionCall(body, headers, action.secret, { now: later }))).toBe(
      "timestamp_outside_tolerance",
    );
    expect(await refusal(verifyActionCall(body, { "x-service-call": "1" }, action.secret))).toBe("missing_headers");
  });
});
