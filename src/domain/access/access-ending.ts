import { and, asc, count, eq, isNull, ne, type SQL } from "drizzle-orm";
import {
  type ActionParameters,
  actions,
  apiKeys,
  intakes,
  knowledgeItems,
  oauthClients,
  oauthGrants,
  webhookEndpoints,
} from "../../db/schema";
import type { Dependencies } from "../../dependencies";
import { apiKeyNotFound } from "./api-keys";
import { connectionNotFound } from "./app-connections";

/*
 * What the owner sees before ending a partner's access: before revoking a key or disconnecting an app, what will stop
 * and what remains, so that the owner decides knowing both (docs/decisions.md, Partners of one business stay apart;
 * docs/architecture.md, What happens when access ends). Each preview is one D1 batch, one query per list, each through
 * an index of the business or of the credential; nothing is changed here: revokeApiKey and disconnectApp do that, and
 * these previews say what they do.
 */

type TouchedAction = {
  id: number;
  name: string;
  title: string;
  enabled: boolean;
  parameters: ActionParameters;
  approvedParameters: ActionParameters | null;
};

/**
 * An action as the page before ending access lists it: whether it is on (the Secretary keeps calling it), and what
 * each call sends the partner besides the business and the conversation: the arguments its approved parameters name.
 */
const withWhatCallsSend = ({ parameters, approvedParameters, ...action }: TouchedAction) => ({
  ...action,
  sends: Object.entries((approvedParameters ?? parameters).properties).map(([name, { description }]) => ({
    name,
    description,
  })),
});

/** Which records of the business a credential's access touches, each list by its own condition. */
type Touched = Record<"intakes" | "endpoints" | "actions" | "knowledge", SQL>;

/** The four lists of a preview, as statements of its batch: intakes, endpoints, actions, knowledge items. */
function touchedRecords(deps: Dependencies, businessId: string, touched: Touched) {
  const { db } = deps;
  return [
    db
      .select({ id: intakes.id, name: intakes.name, title: intakes.title, enabled: intakes.enabled })
      .from(intakes)
      .where(and(eq(intakes.businessId, businessId), touched.intakes))
      .orderBy(asc(intakes.name)),
    db
      .select({ id: webhookEndpoints.id, url: webhookEndpoints.url })
      .from(webhookEndpoints)
      .where(and(eq(webhookEndpoints.businessId, businessId), touched.endpoints))
      .orderBy(asc(webhookEndpoints.id)),
    db
      .select({
        id: actions.id,
        name: actions.name,
        title: actions.title,
        enabled: actions.enabled,
        parameters: actions.parameters,
        approvedParameters: actions.approvedParameters,
      })
      .from(actions)
      .where(and(eq(actions.businessId, businessId), touched.actions))
      .orderBy(asc(actions.name)),
    db
      .select({ key: knowledgeItems.key, title: knowledgeItems.title })
      .from(knowledgeItems)
      .where(and(eq(knowledgeItems.businessId, businessId), touched.knowledge))
      .orderBy(asc(knowledgeItems.key)),
  ] as const;
}

/**
 * Before revoking the API key `id` (docs/architecture.md, What happens when access ends): its own intakes are switched
 * off; when it is the business's last active key, the endpoints created with API keys are deleted with their
 * pending deliveries, else they keep receiving through the other keys; the actions created with API keys and the texts
 * this key pushed remain, and the owner chooses whether those actions are switched off (docs/decisions.md, When access
 * ends). `endpoints` is therefore empty unless this revocation deletes them. The 404 for a key of another business.
 */
export async function keyRevocationPreview(deps: Dependencies, businessId: string, id: number) {
  const { db } = deps;
  const [[key], [others], keyIntakes, keySideEndpoints, keySideActions, knowledge] = await db.batch([
    db
      .select({
        id: apiKeys.id,
        label: apiKeys.label,
        displayPrefix: apiKeys.displayPrefix,
        revokedAt: apiKeys.revokedAt,
      })
      .from(apiKeys)
      .where(and(eq(apiKeys.id, id), eq(apiKeys.businessId, businessId))),
    db
      .select({ count: count() })
      .from(apiKeys)
      .where(and(eq(apiKeys.businessId, businessId), isNull(apiKeys.revokedAt), ne(apiKeys.id, id))),
    ...touchedRecords(deps, businessId, {
      intakes: eq(intakes.apiKeyId, id),
      // The API keys' side: what any of the business's keys created (docs/architecture.md, Principals and owner
      // sides).
      endpoints: isNull(webhookEndpoints.oauthGrantId),
      actions: isNull(actions.oauthGrantId),
      knowledge: eq(knowledgeItems.apiKeyId, id),
    }),
  ]);
  if (!key) throw apiKeyNotFound();
  const otherActiveKeys = others?.count ?? 0;
  const lastActiveKey = key.revokedAt === null && otherActiveKeys === 0;
  return {
    key,
    otherActiveKeys,
    lastActiveKey,
    intakes: keyIntakes,
    endpoints: lastActiveKey ? keySideEndpoints : [],
    /** The key side's endpoints that keep receiving through the other keys (none when this is the last key). */
    endpointsKept: lastActiveKey ? [] : keySideEndpoints,
    actions: keySideActions.map(withWhatCallsSend),
    knowledge,
  };
}

/**
 * Before disconnecting the app connection `id` (docs/architecture.md, What happens when access ends): its tokens stop
 * at once and its intakes are switched off; its webhook endpoints are deleted with their pending deliveries;
 * its actions and knowledge remain, marked as coming from a disconnected app, and the owner chooses whether those
 * actions are switched off (docs/decisions.md, When access ends). The 404 for a connection of another business.
 */
export async function appDisconnectionPreview(deps: Dependencies, businessId: string, id: number) {
  const { db } = deps;
  const [[connection], appIntakes, appEndpoints, appActions, knowledge] = await db.batch([
    db
      .select({ id: oauthGrants.id, appName: oauthClients.clientName, disconnectedAt: oauthGrants.revokedAt })
      .from(oauthGrants)
      .innerJoin(oauthClients, eq(oauthClients.id, oauthGrants.clientId))
      .where(and(eq(oauthGrants.id, id), eq(oauthGrants.businessId, businessId))),
    ...touchedRecords(deps, businessId, {
      intakes: eq(intakes.oauthGrantId, id),
      endpoints: eq(webhookEndpoints.oauthGrantId, id),
      actions: eq(actions.oauthGrantId, id),
      knowledge: eq(knowledgeItems.oauthGrantId, id),
    }),
  ]);
  if (!connection) throw connectionNotFound();
  return {
    connection,
    intakes: appIntakes,
    endpoints: appEndpoints,
    actions: appActions.map(withWhatCallsSend),
    knowledge,
  };
}
