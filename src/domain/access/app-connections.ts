import { and, desc, eq, isNull, sql } from "drizzle-orm";
import { isGuardAbort } from "../../db/d1-failures";
import {
  actions,
  businesses,
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
import { appCopiesEnded } from "../webhooks/app-connection-events";
import { changedRows } from "../webhooks/lifecycle";
import { closeListeningSessions } from "../webhooks/listening-sessions";
import { writeEvents } from "../webhooks/outbox/write";

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
 * its endpoints deleted with their pending deliveries, and the copies of the app's own endpoints told
 * `app.disconnected` and ended (src/domain/webhooks/app-connection-events.ts). Its actions and knowledge stay;
 * `switchActionsOff` is the owner's choice for those actions (docs/decisions.md, When access ends). Scoped by the
 * business: another's is a 404. Disconnecting again changes nothing and tells nobody.
 */
export async function disconnectApp(
  deps: Dependencies,
  businessId: string,
  id: number,
  options: { switchActionsOff?: boolean; now?: EpochMs } = {},
): Promise<{
  id: number;
  disconnectedAt: string;
  intakesSwitchedOff: number;
  actionsSwitchedOff: number;
  endpointsDeleted: number;
}> {
  const { db } = deps;
  const at = iso(options.now ?? deps.clock());
  const ofThisConnection = and(eq(oauthGrants.id, id), eq(oauthGrants.businessId, businessId));
  const copies = appCopiesEnded(deps, businessId, id, at);
  const [[business], [connection], copyRows] = await db.batch([
    db.select().from(businesses).where(eq(businesses.id, businessId)),
    db.select({ revokedAt: oauthGrants.revokedAt }).from(oauthGrants).where(ofThisConnection),
    copies.copies,
  ]);
  if (!business || !connection) throw connectionNotFound();
  const live = connection.revokedAt === null;
  const ofThisBusiness = sql`exists (select 1 from ${oauthGrants} where ${ofThisConnection})`;
  const statements = [
    db
      .update(oauthGrants)
      .set({ revokedAt: sql`coalesce(${oauthGrants.revokedAt}, ${at})` })
      .where(and(ofThisConnection, live ? isNull(oauthGrants.revokedAt) : undefined))
      .returning({ revokedAt: oauthGrants.revokedAt }),
    // Connected when read: disconnected by this batch alone, so that `app.disconnected` is told once.
    ...(live ? [changedRows(deps, 1)] : []),
    db
      .update(oauthTokens)
      .set({ revokedAt: at })
      .where(and(eq(oauthTokens.grantId, id), isNull(oauthTokens.revokedAt), ofThisBusiness)),
    db
      .update(oauthCodes)
      .set({ usedAt: at })
      .where(and(eq(oauthCodes.grantId, id), isNull(oauthCodes.usedAt), ofThisBusiness)),
    ...(live ? copies.before : []),
    db
      .update(intakes)
      .set({ enabled: false, updatedAt: at })
      .where(and(eq(intakes.oauthGrantId, id), eq(intakes.businessId, businessId), eq(intakes.enabled, true)))
      .returning({ id: intakes.id }),
    // The deliveries go with them (foreign key cascade): a queued message then finds nothing to claim.
    db
      .delete(webhookEndpoints)
      .where(
        and(
          eq(webhookEndpoints.oauthGrantId, id),
          eq(webhookEndpoints.businessId, businessId),
          isNull(webhookEndpoints.appEndpointId),
        ),
      )
      .returning({ url: webhookEndpoints.url }),
    // No action matches `false`: the statement stays in the batch either way, so the batch keeps one shape.
    switchSideActionsOff(deps, businessId, options.switchActionsOff ? eq(actions.oauthGrantId, id) : sql`false`, at),
  ];
  let written: Awaited<ReturnType<typeof writeEvents>>;
  try {
    written = await writeEvents(
      deps,
      business,
      live ? copyRows : [],
      live ? [copies.draft] : [],
      statements,
      live ? copies.after : [],
    );
  } catch (error) {
    // Disconnected meanwhile by another request, which told the app: this one finds it disconnected.
    if (isGuardAbort(error)) return disconnectApp(deps, businessId, id, options);
    throw error;
  }
  deps.enqueue(written.deliveryIds);
  const [disconnected] = written.results[0] as { revokedAt: string | null }[];
  const [switchedOff = [], endpointsDeleted = [], actionsOff = []] = written.results.slice(-3) as { url?: string }[][];
  // Its listening sessions' endpoints went with the others: their sockets close now (docs/webhooks.md, Listening
  // sessions end).
  await closeListeningSessions(
    deps,
    endpointsDeleted.map((endpoint) => endpoint.url ?? ""),
    "accessEnded",
  );
  return {
    id,
    disconnectedAt: disconnected?.revokedAt ?? at,
    intakesSwitchedOff: switchedOff.length,
    actionsSwitchedOff: actionsOff.length,
    endpointsDeleted: endpointsDeleted.length + (live ? copyRows.length : 0),
  };
}
