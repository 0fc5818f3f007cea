import { and, asc, desc, eq } from "drizzle-orm";
import type { Database } from "../../db/client";
import { isUniqueViolation } from "../../db/errors";
import { insertWithinLimit } from "../../db/insert-within-limit";
import { type ActionParameters, actionCalls, actions } from "../../db/schema";
import { forbidden, invalid, notFound } from "../../lib/errors";
import { type OutboundPolicy as AddressPolicy, assertRegistrableUrl } from "../../lib/public-address";
import { randomToken } from "../../lib/secrets";
import { isoNow } from "../../lib/time";
import { type Principal, principalRef } from "../access/principals";
import { actionsRunOn, type Channel } from "../secretary/channels";

/** Spec, Limits: "Connected actions per business: 10". */
export const MAX_ACTIONS_PER_BUSINESS = 10;
/** Spec, Connected action: "`GET /actions/{id}` adds `calls`: the 10 most recent calls". */
const RECENT_CALLS = 10;

const NO_PARAMETERS: ActionParameters = { type: "object", properties: {} };

export type Action = typeof actions.$inferSelect;
export type ActionCall = typeof actionCalls.$inferSelect;

/** Spec, Connected action: exactly the fields of its table; `source` is "api_key" or "oauth_app" (DESIGN.md). */
export function toActionObject(action: Action) {
  return {
    id: action.id,
    name: action.name,
    title: action.title,
    description: action.description,
    url: action.url,
    parameters: action.parameters,
    enabled: action.enabled,
    source: action.oauthGrantId === null ? ("api_key" as const) : ("oauth_app" as const),
    failureCount: action.failureCount,
    lastCalledAt: action.lastCalledAt,
    lastSuccessAt: action.lastSuccessAt,
    lastFailureAt: action.lastFailureAt,
    createdAt: action.createdAt,
    updatedAt: action.updatedAt,
  };
}

/** DESIGN.md, Action call record. */
export function toCallObject(call: ActionCall) {
  return {
    id: call.id,
    status: call.status,
    arguments: call.arguments,
    http_status: call.httpStatus,
    error: call.error,
    duration_ms: call.durationMs,
    created_at: call.createdAt,
  };
}

export const actionNotFound = () => notFound("No action with that id exists for this business.");

export async function createAction(
  policy: AddressPolicy,
  db: Database,
  principal: Principal,
  input: { name: string; title: string; description: string; url: string; parameters?: ActionParameters },
) {
  assertRegistrableUrl(policy, input.url);
  const now = isoNow();
  const secret = randomToken("actsec_");
  let action: Action | undefined;
  try {
    action = await insertWithinLimit(
      db,
      actions,
      {
        businessId: principal.business.id,
        ...input,
        parameters: input.parameters ?? NO_PARAMETERS,
        secret,
        enabled: false,
        ...principalRef(principal),
        createdAt: now,
        updatedAt: now,
      },
      MAX_ACTIONS_PER_BUSINESS,
    );
  } catch (error) {
    if (isUniqueViolation(error))
      throw invalid(`The field "name" is "${input.name}", which another action of this business already uses.`);
    throw error;
  }
  if (!action) {
    throw forbidden(
      `A business can have at most ${MAX_ACTIONS_PER_BUSINESS} connected actions: delete one before adding another.`,
    );
  }
  return { ...toActionObject(action), secret };
}

export async function listActions(db: Database, businessId: string) {
  const rows = await db.select().from(actions).where(eq(actions.businessId, businessId)).orderBy(asc(actions.id));
  return rows.map(toActionObject);
}

const ofBusiness = (businessId: string, id: number) => and(eq(actions.id, id), eq(actions.businessId, businessId));

export async function findAction(db: Database, businessId: string, id: number) {
  const action = await db.select().from(actions).where(ofBusiness(businessId, id)).get();
  if (!action) throw actionNotFound();
  return action;
}

/** The action and its 10 most recent calls, in one round trip. */
export async function getAction(db: Database, businessId: string, id: number) {
  const [found, calls] = await db.batch([
    db.select().from(actions).where(ofBusiness(businessId, id)),
    db
      .select()
      .from(actionCalls)
      .where(and(eq(actionCalls.actionId, id), eq(actionCalls.businessId, businessId)))
      .orderBy(desc(actionCalls.id))
      .limit(RECENT_CALLS),
  ]);
  if (!found[0]) throw actionNotFound();
  return { ...toActionObject(found[0]), calls: calls.map(toCallObject) };
}

/**
 * Spec, Connected action `enabled`: "PATCH /actions/{id} with a new url → false, until the owner approves again".
 * Only what differs is written; a PATCH that changes nothing leaves `updatedAt` as it was.
 */
export async function patchAction(
  policy: AddressPolicy,
  db: Database,
  businessId: string,
  actionId: number,
  input: { title?: string; description?: string; url?: string; parameters?: ActionParameters },
) {
  const action = await findAction(db, businessId, actionId);
  if (input.url !== undefined) assertRegistrableUrl(policy, input.url);
  const changes: Partial<Action> = {};
  for (const key of ["title", "description", "url"] as const) {
    const value = input[key];
    if (value !== undefined && value !== action[key]) changes[key] = value;
  }
  if (input.parameters && JSON.stringify(input.parameters) !== JSON.stringify(action.parameters)) {
    changes.parameters = input.parameters;
  }
  if (Object.keys(changes).length === 0) return toActionObject(action);
  if (changes.url !== undefined) changes.enabled = false;
  const [updated] = await db
    .update(actions)
    .set({ ...changes, updatedAt: isoNow() })
    .where(ofBusiness(businessId, action.id))
    .returning();
  if (!updated) throw actionNotFound();
  return toActionObject(updated);
}

export async function deleteAction(db: Database, businessId: string, id: number) {
  const deleted = await db.delete(actions).where(ofBusiness(businessId, id)).returning({ id: actions.id });
  if (deleted.length === 0) throw actionNotFound();
}

/** The owner switches an action on or off (spec: "Only the business owner can switch an action ... on or off"). */
export async function switchAction(db: Database, businessId: string, actionId: number, enabled: boolean) {
  const [updated] = await db
    .update(actions)
    .set({ enabled, updatedAt: isoNow() })
    .where(ofBusiness(businessId, actionId))
    .returning();
  if (!updated) throw actionNotFound();
  return toActionObject(updated);
}

/** What the Secretary may call on a channel (DESIGN.md, context endpoint): enabled actions, none on phone calls. */
export async function actionsForSecretary(db: Database, businessId: string, channel: Channel) {
  if (!actionsRunOn(channel)) return [];
  const rows = await db
    .select({ name: actions.name, description: actions.description, parameters: actions.parameters })
    .from(actions)
    .where(and(eq(actions.businessId, businessId), eq(actions.enabled, true)))
    .orderBy(asc(actions.name));
  return rows;
}
