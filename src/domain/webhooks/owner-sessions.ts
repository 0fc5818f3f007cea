import { and, asc, eq, sql } from "drizzle-orm";
import { apiKeys, webhookEndpoints } from "../../db/schema";
import type { Dependencies } from "../../dependencies";
import { notFound } from "../../lib/api-error";
import { creatorColumns, withCreator } from "../access/creators";
import { isListenerEndpoint } from "./listener-endpoints";
import { closeListeningSessions } from "./listening-sessions";

/*
 * The listening sessions open on a business, as its owner sees and ends them on the Webhooks page (docs/webhooks.md,
 * Listening sessions end): each is a listener endpoint, opened with one API key or one app connection.
 */

/** The key a session was opened with, by primary key: its label and the first characters the owner knows it by. */
const keyColumn = (column: typeof apiKeys.label | typeof apiKeys.displayPrefix) =>
  sql<string | null>`(select ${column} from ${apiKeys} where ${eq(apiKeys.id, webhookEndpoints.apiKeyId)})`;

/** The business's open sessions, oldest first: who opened each (a key by its label, or an app) and since when. */
export async function openSessionsForOwner(deps: Dependencies, businessId: string) {
  const rows = await deps.db
    .select({
      id: webhookEndpoints.id,
      events: webhookEndpoints.events,
      openedAt: webhookEndpoints.createdAt,
      keyLabel: keyColumn(apiKeys.label),
      keyPrefix: keyColumn(apiKeys.displayPrefix),
      oauthGrantId: webhookEndpoints.oauthGrantId,
      ...creatorColumns(webhookEndpoints.oauthGrantId),
    })
    .from(webhookEndpoints)
    .where(and(eq(webhookEndpoints.businessId, businessId), isListenerEndpoint))
    .orderBy(asc(webhookEndpoints.id));
  return rows.map(withCreator);
}

export const sessionNotFound = () => notFound("No listening session with that id is open on this business.");

/**
 * The owner ends a session: its endpoint is deleted (its pending deliveries with it), then its socket is closed with
 * the code that says so. Another business's session, or one already over, is the 404.
 */
export async function endSessionAsOwner(deps: Dependencies, businessId: string, id: number) {
  const [ended] = await deps.db
    .delete(webhookEndpoints)
    .where(and(eq(webhookEndpoints.id, id), eq(webhookEndpoints.businessId, businessId), isListenerEndpoint))
    .returning({ url: webhookEndpoints.url, appEndpointId: webhookEndpoints.appEndpointId });
  if (!ended) throw sessionNotFound();
  // An app's session goes on for its other businesses: only this business's copy ends (docs/decisions.md, Listening
  // as an app).
  if (ended.appEndpointId === null) await closeListeningSessions(deps, [ended.url], "endedByOwner");
}
