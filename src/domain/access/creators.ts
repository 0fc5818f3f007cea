import { eq, type SQL, sql } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import { oauthClients, oauthGrants } from "../../db/schema";

/**
 * Who created a webhook endpoint or an action, as the owner reads it (docs/architecture.md, Principals and owner
 * sides): the business's API keys together, or one app connection, which may since have been disconnected. A
 * disconnected app's actions and knowledge remain, and the dashboard marks them as coming from a disconnected app, so
 * that the owner knows the app can no longer change them (docs/architecture.md, What happens when access ends).
 */
export type Creator = { kind: "api_keys" } | { kind: "app"; appName: string; disconnected: boolean };

/**
 * The columns a select adds to learn the creator of its rows from their `oauth_grant_id`: sub-selects by primary key
 * (the connection, its client), so any owner's list gets them without a join of its own.
 */
export function creatorColumns(oauthGrantId: SQLiteColumn) {
  // Comparisons through eq(), which names each column with its table: drizzle writes a bare column name in a select
  // list, which inside these sub-selects could name the outer row's column of the same name.
  const clientOfGrant = sql`(select ${oauthGrants.clientId} from ${oauthGrants} where ${eq(oauthGrants.id, oauthGrantId)})`;
  return {
    appName: sql<
      string | null
    >`(select ${oauthClients.clientName} from ${oauthClients} where ${eq(oauthClients.id, clientOfGrant)})`,
    appDisconnectedAt: sql<
      string | null
    >`(select ${oauthGrants.revokedAt} from ${oauthGrants} where ${eq(oauthGrants.id, oauthGrantId)})`,
  } satisfies Record<string, SQL>;
}

/** A row's creator from its `oauth_grant_id` and the two `creatorColumns`. */
export function creatorOf(row: {
  oauthGrantId: number | null;
  appName: string | null;
  appDisconnectedAt: string | null;
}): Creator {
  if (row.oauthGrantId === null) return { kind: "api_keys" };
  return { kind: "app", appName: row.appName ?? "An app", disconnected: row.appDisconnectedAt !== null };
}

/** A row with the creator's columns in place of them: `{ ...the rest, creator }`. */
export function withCreator<Row extends Parameters<typeof creatorOf>[0]>(row: Row) {
  const { oauthGrantId, appName, appDisconnectedAt, ...rest } = row;
  return { ...rest, creator: creatorOf({ oauthGrantId, appName, appDisconnectedAt }) };
}
