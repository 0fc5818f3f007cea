import { getTableName, type SQL, sql } from "drizzle-orm";
import type { SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import type { ShardDatabase } from "../../db/client";
import {
  actionCalls,
  actions,
  apiKeys,
  bookings,
  businesses,
  deliveryAttempts,
  events,
  idempotencyKeys,
  intakeResponses,
  intakes,
  knowledgeItems,
  mcpServers,
  oauthClients,
  oauthCodes,
  oauthGrants,
  oauthTokens,
  orders,
  ownerKnowledgeSources,
  ownerSessions,
  owners,
  webhookDeliveries,
  webhookEndpoints,
} from "../../db/schema";

/*
 * Every row of a business, table by table, as a move copies, verifies and deletes them (docs/scaling.md, Moving a
 * business between shards). In foreign-key order: a row's parents come before it, so the copy inserts parents first
 * (and a conflict stops it before any row that depends on the one in conflict) and the deletion goes the other way. A table keyed by business that is missing here would be left behind by a move:
 * test/shards/business-move-steps.test.ts checks every table of the schema is listed or global.
 */

export type BusinessRows = {
  table: SQLiteTable;
  /** The business's rows of the table, by its own business column or through its parent's. */
  of: (businessId: string) => SQL;
  /** Rows shared with other businesses of the shard (a client's copy): copied, never deleted. */
  shared?: true;
  /** How a row is stored in the new shard, when not as it is. */
  copied?: (row: Record<string, unknown>) => Record<string, unknown>;
};

const ownedBy =
  (column: SQLiteColumn) =>
  (businessId: string): SQL =>
    sql`${column} = ${businessId}`;

/** Rows of a table without `business_id`, found through their parent's (`column` references `parent.id`). */
const throughParent =
  (column: SQLiteColumn, parent: { id: SQLiteColumn; businessId: SQLiteColumn }) => (businessId: string) =>
    sql`${column} in (select ${parent.id} from ${parent.id.table} where ${parent.businessId} = ${businessId})`;

export const BUSINESS_ROWS: BusinessRows[] = [
  // Copied with its mark, which the switch clears (src/domain/operations/business-move.ts).
  { table: businesses, of: ownedBy(businesses.id) },
  { table: owners, of: ownedBy(owners.businessId) },
  {
    table: ownerSessions,
    of: throughParent(ownerSessions.ownerId, owners),
  },
  { table: apiKeys, of: ownedBy(apiKeys.businessId) },
  {
    table: oauthClients,
    of: (businessId) =>
      sql`${oauthClients.id} in (select ${oauthGrants.clientId} from ${oauthGrants} where ${oauthGrants.businessId} = ${businessId})`,
    shared: true,
  },
  { table: oauthGrants, of: ownedBy(oauthGrants.businessId) },
  { table: oauthCodes, of: throughParent(oauthCodes.grantId, oauthGrants) },
  { table: oauthTokens, of: throughParent(oauthTokens.grantId, oauthGrants) },
  { table: bookings, of: ownedBy(bookings.businessId) },
  { table: orders, of: ownedBy(orders.businessId) },
  { table: events, of: ownedBy(events.businessId) },
  { table: webhookEndpoints, of: ownedBy(webhookEndpoints.businessId) },
  {
    table: webhookDeliveries,
    of: ownedBy(webhookDeliveries.businessId),
    // A message already on the queue names the old shard, where it finds nothing to claim and is acked: a pending
    // delivery is therefore unenqueued in the new shard, so that its sweep sends it (docs/architecture.md, The outbox).
    copied: (row) => (row.status === "pending" ? { ...row, enqueuedAt: null, leaseUntil: null } : row),
  },
  {
    table: deliveryAttempts,
    of: throughParent(deliveryAttempts.deliveryId, webhookDeliveries),
  },
  { table: mcpServers, of: ownedBy(mcpServers.businessId) },
  { table: actions, of: ownedBy(actions.businessId) },
  { table: actionCalls, of: ownedBy(actionCalls.businessId) },
  { table: intakes, of: ownedBy(intakes.businessId) },
  { table: intakeResponses, of: ownedBy(intakeResponses.businessId) },
  { table: knowledgeItems, of: ownedBy(knowledgeItems.businessId) },
  { table: ownerKnowledgeSources, of: ownedBy(ownerKnowledgeSources.businessId) },
  { table: idempotencyKeys, of: ownedBy(idempotencyKeys.businessId) },
];

/**
 * The tables of the business's credentials, which no other table references: a move deletes them first in the shard
 * the business left, in the step of its switch, so that from then on a partner's old key or token finds its forward
 * instead of its old row, and an owner's old session ends (docs/scaling.md, Moving a business between shards).
 */
export const CREDENTIALS = [apiKeys, oauthTokens, oauthCodes, ownerSessions];

/**
 * The order a move deletes in: the credentials; then the deliveries, so that the shard the business left never sends
 * one of them again once the new shard's sweep does; then the rest, children before parents.
 */
export const DELETION_ORDER: BusinessRows[] = (() => {
  const reversed = BUSINESS_ROWS.filter((rows) => !rows.shared).reverse();
  const first = [...CREDENTIALS, deliveryAttempts, webhookDeliveries].flatMap((table) =>
    reversed.filter((rows) => rows.table === table),
  );
  return [...first, ...reversed.filter((rows) => !first.includes(rows))];
})();

/** The name a move records for the table it has reached (src/db/schema/directory.ts, `business_moves`). */
export const nameOf = (rows: BusinessRows | undefined) => (rows ? getTableName(rows.table) : "");

/** A row as the shard it goes to stores it: `copied`'s transform, or the row as it is. */
export const asCopied = (rows: BusinessRows, row: Record<string, unknown>) => (rows.copied ? rows.copied(row) : row);

/**
 * Up to `limit` of the business's rows of one table in a shard, after rowid `after`, in rowid order: each shard is
 * read in its own order, since a copied row gets a rowid of its own (one statement).
 */
export function pageOf(db: ShardDatabase, rows: BusinessRows, businessId: string, after: number, limit: number) {
  const { table } = rows;
  return db
    .select({ rowid: sql<number>`${table}.rowid`.as("move_rowid"), row: table })
    .from(table)
    .where(sql`${rows.of(businessId)} and ${table}.rowid > ${after}`)
    .orderBy(sql`${table}.rowid`)
    .limit(limit) as Promise<{ rowid: number; row: Record<string, unknown> }[]>;
}

/** Rows a deletion deletes per statement. */
const DELETED_PER_STATEMENT = 500;

/** Deletes up to 500 of the business's rows of one table (one statement); answers whether none is left. */
export async function deletePage(db: ShardDatabase, rows: BusinessRows, businessId: string): Promise<boolean> {
  const { table } = rows;
  const deleted = await db
    .delete(table)
    .where(sql`rowid in (select rowid from ${table} where ${rows.of(businessId)} limit ${DELETED_PER_STATEMENT})`)
    .returning({ deleted: sql<number>`1` });
  return deleted.length < DELETED_PER_STATEMENT;
}
