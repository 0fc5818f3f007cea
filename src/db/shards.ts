/*
 * The databases the platform grows by (docs/scaling.md, Regional shards). Every business, with every row keyed by it,
 * lives in one shard of its region; a shard is a D1 binding of wrangler.toml with the same migrations. `legacy` is the
 * first database (binding `DB`): it holds every business created before sharding, whose credentials name no shard,
 * and the global tables that are read before a business is known (the directory, owners' emails, OAuth clients).
 */

/**
 * Each shard, its binding, its region, its slot of row ids (`idSlot`: every id it hands out is the slot modulo 16;
 * src/db/ids.ts) and its jurisdiction, where its businesses' Durable Objects are created too
 * (src/durable-objects/jurisdictions.ts). Adding one is a line here with the next unused slot, a binding in
 * wrangler.toml and a deploy; a slot is never reused, so that ids stay unique across shards.
 */
export const SHARDS = {
  legacy: { binding: "DB", region: "the first database", idSlot: 0, jurisdiction: null },
  eu1: { binding: "SHARD_EU1", region: "European Union (EU jurisdiction)", idSlot: 1, jurisdiction: "eu" },
  us1: { binding: "SHARD_US1", region: "North America", idSlot: 2, jurisdiction: null },
  /**
   * Sandbox businesses only (docs/guides/sandbox.md): their generated data and a developer's test traffic never share
   * a database with live businesses, so nothing done in a sandbox can fill or slow a live shard.
   */
  sandbox: { binding: "SHARD_SANDBOX", region: "sandbox businesses (test data only)", idSlot: 3, jurisdiction: null },
} as const;

/** A jurisdiction Durable Objects and D1 databases can be kept in (Cloudflare's data location). */
export type Jurisdiction = NonNullable<(typeof SHARDS)[ShardName]["jurisdiction"]>;

export type ShardName = keyof typeof SHARDS;

export const LEGACY_SHARD: ShardName = "legacy";

/** Where every sandbox business is, whatever its country, and no live business ever is. */
export const SANDBOX_SHARD: ShardName = "sandbox";

export const SHARD_NAMES = Object.keys(SHARDS) as ShardName[];

export const isShardName = (name: string): name is ShardName => Object.hasOwn(SHARDS, name);

/** The EU and EEA countries (ISO 3166-1 alpha-2): their businesses' data stays in the EU jurisdiction. */
const EU_COUNTRIES = new Set(
  "AT BE BG HR CY CZ DK EE FI FR DE GR HU IE IT LV LT LU MT NL PL PT RO SK SI ES SE IS LI NO".split(" "),
);

/** Where a new business is placed: by its country, in a shard of its region (new businesses never go to legacy). */
export const shardForCountry = (country: string): ShardName =>
  EU_COUNTRIES.has(country.toUpperCase()) ? "eu1" : "us1";

/**
 * A secret of a business in `shard` (API key, token, code, session): the prefix, the shard's name and `_`, then 32
 * random bytes in base64url (43 characters). A legacy business's secrets name no shard, as before sharding.
 */
export const shardSegment = (shard: ShardName) => (shard === LEGACY_SHARD ? "" : `${shard}_`);

const RANDOM_PART = /^[A-Za-z0-9_-]{43}$/;

/**
 * The shard a secret names after its `prefix`: 43 characters alone are a legacy secret; a known shard's name and `_`
 * before them name that shard; anything else is not a secret of this service (undefined).
 */
export function shardOfSecret(prefix: string, secret: string): ShardName | undefined {
  if (!secret.startsWith(prefix)) return undefined;
  const rest = secret.slice(prefix.length);
  if (RANDOM_PART.test(rest)) return LEGACY_SHARD;
  const separator = rest.indexOf("_");
  const name = rest.slice(0, separator);
  return separator > 0 && isShardName(name) && name !== LEGACY_SHARD && RANDOM_PART.test(rest.slice(separator + 1))
    ? name
    : undefined;
}
