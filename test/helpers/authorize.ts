import { eq } from "drizzle-orm";
import { expect } from "vitest";
import { oauthCodes, oauthGrants } from "../../src/db/schema";
import { db } from "./fixtures";
import { call } from "./http";
import { authorizeQuery, type RegisteredClient, validAuthorizationParams } from "./oauth";

// Checks of the authorization endpoint (/oauth/authorize) shared by the files of test/oauth/authorize-*.

export const codesOf = (clientId: string) =>
  db
    .select({ code: oauthCodes })
    .from(oauthCodes)
    .innerJoin(oauthGrants, eq(oauthGrants.id, oauthCodes.grantId))
    .where(eq(oauthGrants.clientId, clientId));

export async function expectErrorPage(response: Response, sentence: RegExp) {
  await expect(response).toHaveStatus(400);
  expect(response.headers.get("Location")).toBeNull();
  expect(response.headers.get("Content-Type")).toMatch(/^text\/html/);
  expect(await response.text()).toMatch(sentence);
}

/** A GET of /oauth/authorize by `client`, with valid parameters but for `overrides` (undefined removes one). */
export async function requestAuthorization(
  client: RegisteredClient,
  overrides: Record<string, string | undefined> = {},
) {
  const { params } = await validAuthorizationParams(client, overrides);
  return { response: await call(`/oauth/authorize?${authorizeQuery(params)}`), params };
}
