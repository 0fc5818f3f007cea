import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import type { ShardName } from "../shards";
import { createdAt, flag, timestamp } from "./columns";

/*
 * The global tables (src/db/shards.ts): what must be found before the business, and so its shard, is known. They live
 * in the legacy database (binding `DB`); in the other shards they stay empty.
 */

/** Which shard holds a business. A business without a row is in the legacy shard (created before sharding). */
export const businessShards = sqliteTable(
  "business_shards",
  {
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
  },
  // The sandboxes in use, counted against their cap at each creation (src/domain/access/directory.ts).
  (t) => [index("business_shards_sandbox").on(t.sandbox).where(sql`${t.sandbox} = 1`)],
);

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

/**
 * What a move of a business between shards is doing (docs/scaling.md, Moving a business between shards): marking it,
 * copying its rows, verifying the copies, deleting the rows it left (after the switch), or undoing the copy.
 */
export const MOVE_PHASES = ["marking", "copying", "verifying", "deleting", "undoing"] as const;
export type MovePhase = (typeof MOVE_PHASES)[number];

/** The count and checksum of a table's rows of one business, read so far (src/domain/operations/move-checksum.ts). */
export type RowsTally = { rows: number; checksum: number };

/** Why a move stopped and is undone: the key conflict or the difference its verification found. */
export type MoveAbort = { code: "move_conflict" | "move_mismatch"; message: string };

/**
 * A move under way, one row per business while it lasts: each step of the move continues from it and records how far
 * it got, so that a step that failed is run again from there. Deleted when the move ends or is undone.
 */
export const businessMoves = sqliteTable("business_moves", {
  businessId: text("business_id").primaryKey(),
  fromShard: text("from_shard").$type<ShardName>().notNull(),
  toShard: text("to_shard").$type<ShardName>().notNull(),
  phase: text("phase", { enum: MOVE_PHASES }).notNull(),
  /** The table the phase has reached (src/domain/operations/business-rows.ts), and the last rowid done in it. */
  tableName: text("table_name").notNull(),
  afterRowid: integer("after_rowid").notNull().default(0),
  rowsCopied: integer("rows_copied").notNull().default(0),
  /** While verifying `table_name`: the tally of the source's rows once read, and of the side being read so far. */
  tally: text("tally", { mode: "json" }).$type<RowsTally & { source?: RowsTally }>(),
  /** The rows of each table verified equal in both shards, which the move answers when it ends. */
  tableRows: text("table_rows", { mode: "json" }).$type<Record<string, number>>().notNull(),
  aborted: text("aborted", { mode: "json" }).$type<MoveAbort>(),
  startedAt: timestamp("started_at").notNull(),
});
