import { and, eq, isNull, type SQL } from "drizzle-orm";
import type { Database } from "../../db/client";
import { oauthGrants, oauthTokens } from "../../db/schema";
import { optionalParameter, requiredParameter } from "../../lib/oauth-parameters";
import { sha256Hex } from "../../lib/secrets";
import { type EpochMs, iso } from "../../lib/time";
import { authenticateClient } from "./client-authentication";
import { TOKEN_PATTERN } from "./token-format";

/** Every live token of a connection, revoked (reuse detection, revocation, disconnection). */
export const revokeTokensOfGrant = (db: Database, grantId: number | SQL, now: EpochMs) =>
  db
    .update(oauthTokens)
    .set({ revokedAt: iso(now) })
    .where(and(eq(oauthTokens.grantId, grantId), isNull(oauthTokens.revokedAt)));

/**
 * Revocation (RFC 7009 §2.1; spec: OAuth artefacts, "both tokens ... token posted to the revocation endpoint →
 * stop working at once"): either token of the authenticated client revokes every token of its connection, access
 * and refresh alike. The connection stays, with its intakes: only the owner's disconnection switches those off.
 * An unknown token, or one of another client, changes nothing and gets the same answer (RFC 7009 §2.2: "invalid
 * tokens do not cause an error response"), so that the endpoint tells nobody whether a token exists.
 */
export async function revocationRequest(
  db: Database,
  authorization: string | undefined,
  form: URLSearchParams,
  now: EpochMs = Date.now(),
): Promise<void> {
  const token = requiredParameter(form, "token");
  const client = await authenticateClient(db, authorization, form);
  // RFC 7009 §2.1: token_type_hint is only a hint; both kinds are found by the same lookup.
  optionalParameter(form, "token_type_hint");
  if (!TOKEN_PATTERN.test(token)) return;
  const row = await db
    .select({ grantId: oauthTokens.grantId, clientId: oauthGrants.clientId })
    .from(oauthTokens)
    .innerJoin(oauthGrants, eq(oauthGrants.id, oauthTokens.grantId))
    .where(eq(oauthTokens.tokenHash, sha256Hex(token)))
    .get();
  if (!row || row.clientId !== client.id) return;
  await revokeTokensOfGrant(db, row.grantId, now);
}
