import { describe, expect, it } from "vitest";
import { createBusiness } from "../helpers/fixtures";
import { call, json, RUNTIME } from "../helpers/http";

/*
 * docs/guides/connected-actions.md: an action is a lookup only, it cannot submit, reserve or cancel anything. The
 * runtime's context tells the Secretary so in words, on every channel, beside the other rules of calling actions.
 */
describe("the context's action rules", async () => {
  const { business } = await createBusiness();

  it.each(["whatsapp", "chat_page", "phone"])("say on %s that actions only look things up", async (channel) => {
    const response = await call(`/internal/v1/businesses/${business.id}/context?channel=${channel}`, {
      headers: RUNTIME,
    });
    await expect(response).toHaveStatus(200);
    const { action_rules } = await json<{ action_rules: string[] }>(response);
    const lookupsOnly = action_rules.find((rule) => rule.startsWith("Actions only look things up"));
    expect(lookupsOnly).toBe(
      "Actions only look things up: use them to read information, never to change anything. No action submits, reserves, books, orders or cancels, so never tell the customer that an action did.",
    );
  });
});
