import { and, desc, eq, isNull, sql } from "drizzle-orm";
import {
  actions,
  intakes,
  oauthClients,
  oauthCodes,
  oauthGrants,
  oauthTokens,
  webhookEndpoints,
} from "../../db/schema";
import type { Dependencies } from "../../dependencies";
import { notFound } from "../../lib/api-error";
import { type EpochMs, iso } from "../../lib/time";
import { switchSideActionsOff } from "../actions/owner-decisions";
import { closeListeningSessions } from "../webhooks/listening-sessions";

export type AppConnection = {
  id: number;
  clientId: string;
  /** The client's registered `client_name`, which owners see (docs/guides/oauth.md, 1. Register once). */
  appName: string;
  connectedAt: string;
  disconnectedAt: string | null;
};

/**
 * The business's app connections, newest first, disconnected ones included (the owner's list in the dashboard).
 * One query through the (business, revoked_at) index and the clients' primary key.
 */
export async function listConnections(deps: Dependencies, businessId: string): Promise<AppConnection[]> {
  return deps.db
    .select({
      id: oauthGrants.id,
      clientId: oauthGrants.clientId,
      appName: oauthClients.clientName,
      connectedAt: oauthGrants.createdAt,
      disconnectedAt: oauthGrants.revokedAt,
    })
    .from(oauthGrants)
    .innerJoin(oauthClients, eq(oauthClients.id, oauthGrants.clientId))
    .where(eq(oauthGrants.businessId, businessId))
    .orderBy(desc(oauthGrants.id));
}

export const connectionNotFound = () => notFound("No connected app with that id exists for this business.");

/**
 * The owner disconnects an app (docs/architecture.md, What happens when access ends), in one D1 batch: the connection
 * marked, its tokens revoked, its unused codes spent (none redeemable after a reconnection), its intakes switched off,
 * its endpoints deleted with their pending deliveries. Its actions and knowledge stay; `switchActionsOff` is the
 * owner's choice for those actions (docs/decisions.md, When access ends). Scoped by the business: another's is a 404.
 */
export async function disconnectApp(
  deps: Dependencies,
  businessId: string,
  id: number,
  options: { switchActionsOff?: boolean; now?: EpochMs } = {},
) {
  const { db } = deps;
  const at = iso(options.now ?? deps.clock());
  const ofThisBusiness = sql`exists (select 1 from ${oauthGrants} where ${oauthGrants.id} = ${id} and ${oauthGrants.businessId} = ${businessId})`;
  const [disconnected, , , switchedOff, endpointsDeleted, actionsOff] = await db.batch([
    db
      .update(oauthGrants)
      .set({ revokedAt: sql`coalesce(${oauthGrants.revokedAt}, ${at})` })
      .where(and(eq(oauthGrants.id, id), eq(oauthGrants.businessId, businessId)))
      .returning({ id: oauthGrants.id, revokedAt: oauthGrants.revokedAt }),
    db
      .update(oauthTokens)
      .set({ revokedAt: at })
      .where(and(eq(oauthTokens.grantId, id), isNull(oauthTokens.revokedAt), ofThisBusiness)),
    db
      .update(oauthCodes)
      .set({ usedAt: at })
      .where(and(eq(oauthCodes.grantId, id), isNull(oauthCodes.usedAt), ofThisBusiness)),
    db
      .update(intakes)
      .set({ enabled: false, updatedAt: at })
      .where(and(eq(intakes.oauthGrantId, id), eq(intakes.businessId, businessId), eq(intakes.enabled, true)))
      .returning({ id: intakes.id }),
    // The deliveries go with them (foreign key cascade): a queued message then finds nothing to claim.
    db
      .delete(webhookEndpoints)
      .where(and(eq(webhookEndpoints.oauthGrantId, id), eq(webhookEndpoints.businessId, businessId)))
      .returning({ id: webhookEndpoints.id, url: webhookEndpoints.url }),
    // No action matches `false`: the statement stays in the batch either way, so the batch keeps one shape.
    switchSideActionsOff(deps, businessId, options.switchActionsOff ? eq(actions.oauthGrantId, id) : sql`false`, at),
  ]);
  const [connection] = disconnected;
  if (!connection) throw connectionNotFound();
  // Its listening sessions' endpoints went with the others: their sockets close now (docs/webhooks.md, Listening
  // sessions end).
  await closeListeningSessions(
    deps,
    endpointsDeleted.map((endpoint) => endpoint.url),
    "accessEnded",
  );
  return {
    id: connection.id,
    disconnectedAt: connection.revokedAt ?? at,
    intakesSwitchedOff: switchedOff.length,
    actionsSwitchedOff: actionsOff.length,
    endpointsDeleted: endpointsDeleted.length,
  };
}
