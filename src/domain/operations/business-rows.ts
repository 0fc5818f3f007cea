import { type SQL, sql } from "drizzle-orm";
import type { SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import { runBatch, statementsThatFit } from "../../db/batches";
import type { Database } from "../../db/client";
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
 * Every row of a business, table by table, as a move copies and deletes them (docs/scaling.md, Moving a business
 * between shards). In foreign-key order: a row's parents come before it, so the copy inserts parents first and the
 * deletion goes the other way. A table keyed by business that is missing here would be left behind by a move:
 * test/shards/business-move-steps.test.ts checks every table of the schema is listed or global.
 */

type BusinessRows = {
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
  // The new shard's row is unmarked: the directory's mark is what refuses writes until the switch.
  { table: businesses, of: ownedBy(businesses.id), copied: (row) => ({ ...row, movingSince: null }) },
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
  { table: actions, of: ownedBy(actions.businessId) },
  { table: actionCalls, of: ownedBy(actionCalls.businessId) },
  { table: intakes, of: ownedBy(intakes.businessId) },
  { table: intakeResponses, of: ownedBy(intakeResponses.businessId) },
  { table: knowledgeItems, of: ownedBy(knowledgeItems.businessId) },
  { table: ownerKnowledgeSources, of: ownedBy(ownerKnowledgeSources.businessId) },
  { table: idempotencyKeys, of: ownedBy(idempotencyKeys.businessId) },
];

/**
 * The order a move deletes in: children before parents, and the deliveries first, so that the shard the business
 * left never sends one of them again once the new shard's sweep does.
 */
export const DELETION_ORDER: BusinessRows[] = (() => {
  const reversed = BUSINESS_ROWS.filter((rows) => !rows.shared).reverse();
  const deliveries = reversed.filter((rows) => rows.table === deliveryAttempts || rows.table === webhookDeliveries);
  return [...deliveries, ...reversed.filter((rows) => !deliveries.includes(rows))];
})();

/** Rows read, and deleted, per statement: a page of a table's rows in rowid order. */
const PAGE = 500;

/**
 * Copies the business's rows of one table from `from` to `to`, a page at a time in rowid order (a read, then its
 * inserts in one batch, each statement within D1's 100 bound parameters: src/db/batches.ts). A row already there (an
 * earlier run's copy, a client's copy) is left as it is, so a move run again after a failure copies only what is
 * missing. Answers how many rows were inserted.
 */
export async function copyRows(from: Database, to: Database, rows: BusinessRows, businessId: string): Promise<number> {
  const { table } = rows;
  let after = 0;
  let copied = 0;
  for (;;) {
    const page = await from
      .select({ rowid: sql<number>`${table}.rowid`.as("move_rowid"), row: table })
      .from(table)
      .where(sql`${rows.of(businessId)} and ${table}.rowid > ${after}`)
      .orderBy(sql`${table}.rowid`)
      .limit(PAGE);
    const last = page.at(-1);
    if (!last) return copied;
    after = last.rowid;
    const values = page.map(({ row }) => (rows.copied ? rows.copied(row) : row));
    const inserts = statementsThatFit(values, (slice) =>
      to
        .insert(table)
        .values(slice as never)
        .onConflictDoNothing()
        .returning({ inserted: sql<number>`1` }),
    );
    const answers = (await runBatch(to, inserts)) as unknown[][];
    copied += answers.reduce((sum, answer) => sum + answer.length, 0);
  }
}

/** Deletes the business's rows of one table, a page per statement, until none is left. */
export async function deleteRows(db: Database, rows: BusinessRows, businessId: string): Promise<void> {
  const { table } = rows;
  for (;;) {
    const deleted = await db
      .delete(table)
      .where(sql`rowid in (select rowid from ${table} where ${rows.of(businessId)} limit ${PAGE})`)
      .returning({ deleted: sql<number>`1` });
    if (deleted.length < PAGE) return;
  }
}
