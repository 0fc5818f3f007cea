import { randomToken, sha256Hex } from "../../lib/secrets";

/**
 * The form of an API key and the limit on them, in a module of their own (no database, no framework) so that the
 * seed (scripts/seed.ts) makes its keys with this very code.
 */

/** `sk_live_` + 32 random bytes in base64url (docs/decisions.md, Authentication and the plan). */
export const API_KEY_PREFIX = "sk_live_";

/** Spec, Authentication: "At most 10 active keys per business." */
export const MAX_ACTIVE_KEYS = 10;

/**
 * A new key: shown once, stored only as its SHA-256 with its first 12 characters to recognise it by
 * (docs/decisions.md, Data model).
 */
export function newApiKey(): { key: string; keyHash: string; displayPrefix: string } {
  const key = randomToken(API_KEY_PREFIX);
  return { key, keyHash: sha256Hex(key), displayPrefix: key.slice(0, 12) };
}
