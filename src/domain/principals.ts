import { eq } from "drizzle-orm";
import type { Database } from "../db/client";
import { apiKeys, businesses } from "../db/schema";
import { unauthorized } from "../lib/errors";
import { sha256Hex } from "../lib/secrets";
import type { Business } from "./businesses";

/**
 * Who makes a partner request (DESIGN.md, Principals and ownership): an API key, or (with the OAuth issue) an app
 * connection. Every partner query is scoped by `business.id`; intakes belong to the principal itself.
 */
export type Principal = { kind: "api_key"; apiKeyId: number; business: Business };

/** `sk_live_` + 32 random bytes in base64url (DESIGN.md, API key format). */
export const API_KEY_PREFIX = "sk_live_";
const API_KEY_PATTERN = /^sk_live_[A-Za-z0-9_-]{43}$/;

/**
 * Spec, Authentication: "A missing, malformed or revoked key returns 401." A malformed credential is refused before
 * any query; a well-formed one costs one indexed lookup by its SHA-256, joined with its business.
 */
export async function authenticatePartner(db: Database, authorization: string | undefined): Promise<Principal> {
  if (!authorization) {
    throw unauthorized("An API key is required: send the header Authorization: Bearer <API key>.");
  }
  const match = /^Bearer +(\S+)$/i.exec(authorization.trim());
  const credential = match?.[1];
  if (!credential || !API_KEY_PATTERN.test(credential)) {
    throw unauthorized("The Authorization header is malformed: it must be Bearer followed by an API key.");
  }
  const row = await db
    .select({ apiKeyId: apiKeys.id, revokedAt: apiKeys.revokedAt, business: businesses })
    .from(apiKeys)
    .innerJoin(businesses, eq(businesses.id, apiKeys.businessId))
    .where(eq(apiKeys.keyHash, sha256Hex(credential)))
    .get();
  if (!row) throw unauthorized("The API key is not recognised.");
  if (row.revokedAt) throw unauthorized("The API key has been revoked.");
  return { kind: "api_key", apiKeyId: row.apiKeyId, business: row.business };
}

/** The principal's columns on the records it creates (exactly one is set). */
export type PrincipalRef = { apiKeyId: number | null; oauthGrantId: number | null };

export function principalRef(principal: Principal): PrincipalRef {
  return { apiKeyId: principal.apiKeyId, oauthGrantId: null };
}

export const samePrincipal = (a: PrincipalRef, b: PrincipalRef) =>
  a.apiKeyId === b.apiKeyId && a.oauthGrantId === b.oauthGrantId;
