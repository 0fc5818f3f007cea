import { eq } from "drizzle-orm";
import { expect } from "vitest";
import { oauthCodes, oauthGrants } from "../../src/db/schema";
import { db } from "./fixtures";

// Checks of the authorization endpoint (/oauth/authorize) shared by the files of test/oauth/authorize-*.

export const codesOf = (clientId: string) =>
  db
    .select({ code: oauthCodes })
    .from(oauthCodes)
    .innerJoin(oauthGrants, eq(oauthGrants.id, oauthCodes.grantId))
    .where(eq(oauthGrants.clientId, clientId));

export async function expectErrorPage(response: Response, sentence: RegExp) {
  expect(response.status).toBe(400);
  expect(response.headers.get("Location")).toBeNull();
  expect(response.headers.get("Content-Type")).toMatch(/^text\/html/);
  expect(await response.text()).toMatch(sentence);
}
