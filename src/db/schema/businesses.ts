import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { createdAt, flag, shardId, timestamp } from "./columns";

/** The plans of a business; the seed (scripts/seed.ts) takes them from here too. */
export const PLANS = ["free", "pro", "business"] as const;
export type Plan = (typeof PLANS)[number];

export const businesses = sqliteTable(
  "businesses",
  {
    id: text("id").primaryKey(),
    handle: text("handle").notNull().unique(),
    name: text("name").notNull(),
    currency: text("currency").notNull(),
    country: text("country").notNull(),
    timeZone: text("time_zone").notNull(),
    plan: text("plan", { enum: PLANS }).notNull(),
    planActive: flag("plan_active").notNull(),
    /** The owner's settings the Secretary answers from first (opening hours, services, prices, contact details). */
    settings: text("settings", { mode: "json" }).$type<Record<string, unknown>>().notNull().default(sql`'{}'`),
    createdAt: createdAt(),
    updatedAt: timestamp("updated_at").notNull(),
    /**
     * Set while the business is copied to another shard, as on its directory row: partner and owner writes, which find
     * the business from their credential and not from the directory, read it here and are refused with 503 until the
     * move ends (docs/scaling.md, Moving a business between shards).
     */
    movingSince: timestamp("moving_since"),
    /**
     * A sandbox business (docs/guides/sandbox.md): made by a partner developer to try the API, with test keys only
     * (`sk_test_…`), never reached by the core platform, and deleted after 30 days unused.
     */
    sandbox: flag("sandbox").notNull().default(false),
  },
  // The cron's cleanup of sandbox businesses unused for 30 days reads the oldest first, and sandbox ones only
  // (src/domain/sandbox/cleanup.ts): live businesses cost it nothing.
  (t) => [index("businesses_sandbox_created").on(t.createdAt).where(sql`${t.sandbox} = 1`)],
);

/**
 * Where a credential of a business that moved away lives now: one row per API key and OAuth token hash, written in
 * the shard the business left (docs/scaling.md, Moving a business between shards). The credential keeps naming that
 * shard, and its lookup there finds this row when it finds no credential, then runs on the named shard.
 */
export const credentialForwards = sqliteTable("credential_forwards", {
  credentialHash: text("credential_hash").primaryKey(),
  shard: text("shard").notNull(),
  createdAt: createdAt(),
});

export const owners = sqliteTable("owners", {
  id: shardId("owners"),
  businessId: text("business_id")
    .notNull()
    .unique()
    .references(() => businesses.id, { onDelete: "cascade" }),
  email: text("email").notNull().unique(),
  /** `pbkdf2-sha256$<iterations>$<salt b64url>$<hash b64url>` */
  passwordHash: text("password_hash").notNull(),
  createdAt: createdAt(),
  /**
   * The owner's latest sign-in: sessions go a day after they expire (retention), so this is what tells, later, that
   * the owner used a sandbox business (docs/decisions.md, Sandbox businesses).
   */
  lastSignedInAt: timestamp("last_signed_in_at"),
});

export const ownerSessions = sqliteTable(
  "owner_sessions",
  {
    id: shardId("owner_sessions"),
    ownerId: integer("owner_id")
      .notNull()
      .references(() => owners.id, { onDelete: "cascade" }),
    /** SHA-256 of the cookie's random token: the token itself is never stored. */
    tokenHash: text("token_hash").notNull(),
    csrfSecret: text("csrf_secret").notNull(),
    /** The sign-in that started the session: a key's creation or an app's disconnection asks again 10 minutes on. */
    createdAt: createdAt(),
    expiresAt: timestamp("expires_at").notNull(),
    /**
     * The session's last use, recorded at most every 5 minutes; null until the first record (the sign-in is its first
     * use). Unused for 30 minutes, the session ends (domain/access/owner-sign-in.ts).
     */
    lastUsedAt: timestamp("last_used_at"),
  },
  (t) => [
    uniqueIndex("owner_sessions_token_hash").on(t.tokenHash),
    index("owner_sessions_owner").on(t.ownerId),
    // Retention (docs/decisions.md, Operations): the expired sessions are one range.
    index("owner_sessions_expires").on(t.expiresAt),
  ],
);

export const apiKeys = sqliteTable(
  "api_keys",
  {
    id: shardId("api_keys"),
    businessId: text("business_id")
      .notNull()
      .references(() => businesses.id, { onDelete: "cascade" }),
    /** SHA-256 (hex) of the whole key; keys are looked up by it (docs/architecture.md, Principals and owner sides). */
    keyHash: text("key_hash").notNull(),
    /** The first characters of the key, so that the owner can tell keys apart in the dashboard. */
    displayPrefix: text("display_prefix").notNull(),
    label: text("label").notNull(),
    createdAt: createdAt(),
    revokedAt: timestamp("revoked_at"),
    /** When a request last used the key, recorded at most once an hour (the owner's overview). */
    lastUsedAt: timestamp("last_used_at"),
  },
  (t) => [
    uniqueIndex("api_keys_key_hash").on(t.keyHash),
    index("api_keys_business_revoked").on(t.businessId, t.revokedAt),
  ],
);
