import { expect } from "vitest";
import { call, json } from "./http";

/**
 * Registers an action with `credential` (`POST /api/v1/actions`): a stock check named `name`, at `url`, with
 * `parameters` when given, off until the owner switches it on; answers the 201's record, its secret included (the
 * test fails loudly if the service refuses).
 */
export async function registerAction(
  credential: string,
  name: string,
  {
    url = "https://partner.example/stock",
    title = `Action ${name}`,
    parameters,
  }: { url?: string; title?: string; parameters?: Record<string, unknown> } = {},
) {
  const response = await call("/api/v1/actions", {
    key: credential,
    method: "POST",
    body: { name, title, description: "Tells whether a product is in stock today.", url, parameters },
  });
  await expect(response).toHaveStatus(201);
  return json<{ id: number; name: string; secret: string }>(response);
}
