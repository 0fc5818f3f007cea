import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { businesses } from "./businesses";
import { createdAt, shardId } from "./columns";

/**
 * The answers kept for `Idempotency-Key` (docs/idempotency.md): one row per (principal, key), claimed before the
 * handler writes and completed with its answer. A row whose `status` is null is still running. Rows older than 24
 * hours count as absent (the next claim replaces them); deleting them is the retention cron's (docs/decisions.md,
 * Operations).
 */
export const idempotencyKeys = sqliteTable(
  "idempotency_keys",
  {
    id: shardId("idempotency_keys"),
    businessId: text("business_id")
      .notNull()
      .references(() => businesses.id, { onDelete: "cascade" }),
    /**
     * `key:<api key id>` or `app:<oauth grant id>`: keys are not shared between principals, not even between the API
     * keys of one business (docs/idempotency.md, The contract).
     */
    principal: text("principal").notNull(),
    key: text("key").notNull(),
    /** SHA-256 of the method, path and body: the same key with another request is a 422. */
    fingerprint: text("fingerprint").notNull(),
    status: integer("status"),
    /** The headers a replay repeats (Content-Type, Location), as a JSON object. */
    headers: text("headers", { mode: "json" }).$type<Record<string, string>>(),
    body: text("body"),
    createdAt: createdAt(),
  },
  // The claim is an INSERT ... ON CONFLICT on this index: of concurrent first requests, exactly one wins.
  // Retention (docs/decisions.md, Operations): the expired records are one range of `idempotency_keys_created`.
  (t) => [
    uniqueIndex("idempotency_keys_principal_key").on(t.principal, t.key),
    index("idempotency_keys_created").on(t.createdAt),
  ],
);
