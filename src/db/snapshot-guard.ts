import { type SQL, sql } from "drizzle-orm";
import { integer, sqliteTable } from "drizzle-orm/sqlite-core";
import type { Database } from "./client";

/**
 * The view of migrations/0001_snapshot_guard.sql, declared here and not in `schema/` because drizzle-kit must not
 * create it as a table. Inserting 0 into it aborts the batch; inserting 1 stores nothing.
 */
const snapshotGuard = sqliteTable("snapshot_guard", { current: integer("current").notNull() });

/**
 * A batch statement that aborts the whole batch unless `condition` holds when it runs (recognised by
 * `isGuardAbort`). D1 has no interactive transactions; this puts a compare-and-swap into one batch: read, decide,
 * then write behind a guard that what was read still stands.
 */
export const guard = (db: Database, condition: SQL) =>
  db.insert(snapshotGuard).select(sql`select case when ${condition} then 1 else 0 end`);
