import { type ShardName, shardSegment } from "../../db/shards";
import { randomToken, sha256Hex } from "../../lib/secrets";

/**
 * The form of an API key and the limit on them, in a module of their own (no database, no framework) so that the
 * seed (scripts/seed.ts) makes its keys with this very code.
 */

/**
 * `sk_live_`, the business's shard and `_`, then 32 random bytes in base64url (docs/decisions.md, Authentication and
 * the plan; src/db/shards.ts): the key names its shard, so a request finds its database without a global lookup.
 */
export const API_KEY_PREFIX = "sk_live_";

/**
 * A sandbox business's keys are test keys, `sk_test_` and the rest alike (docs/guides/sandbox.md): what a key may
 * reach shows in its first characters, as Stripe's do, and a test key works on a sandbox business only.
 */
export const TEST_API_KEY_PREFIX = "sk_test_";

/** At most 10 active keys per business (docs/guides/getting-started.md, A credential). */
export const MAX_ACTIVE_KEYS = 10;

/**
 * A new key of a business in `shard`: shown once, stored only as its SHA-256 with its prefix and first 4 random
 * characters to recognise it by (docs/decisions.md, Data model).
 */
export function newApiKey(
  shard: ShardName,
  { test }: { test: boolean } = { test: false },
): { key: string; keyHash: string; displayPrefix: string } {
  const prefix = (test ? TEST_API_KEY_PREFIX : API_KEY_PREFIX) + shardSegment(shard);
  const key = randomToken(prefix);
  return { key, keyHash: sha256Hex(key), displayPrefix: key.slice(0, prefix.length + 4) };
}
