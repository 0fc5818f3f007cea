import { index, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { createdAt, flag, timestamp } from "./columns";

/*
 * The global tables (src/db/shards.ts): what must be found before the business, and so its shard, is known. They live
 * in the legacy database (binding `DB`); in the other shards they stay empty.
 */

/** Which shard holds a business. A business without a row is in the legacy shard (created before sharding). */
export const businessShards = sqliteTable("business_shards", {
  businessId: text("business_id").primaryKey(),
  shard: text("shard").notNull(),
  /** Set while the business is copied to another shard: its writes are refused with 503 until the move ends. */
  movingSince: timestamp("moving_since"),
  createdAt: createdAt(),
  /**
   * A sandbox business (as its own `businesses.sandbox`): the runtime API, which finds a business here, answers it as
   * unknown, so the core platform never reaches it (docs/decisions.md, Sandbox businesses).
   */
  sandbox: flag("sandbox").notNull().default(false),
});

/** An owner's sign-in email and their business: the sign-in finds the shard from it (docs/scaling.md, Sign-in). */
export const ownerEmails = sqliteTable(
  "owner_emails",
  {
    email: text("email").primaryKey(),
    businessId: text("business_id").notNull(),
    createdAt: createdAt(),
  },
  (t) => [index("owner_emails_business").on(t.businessId)],
);
