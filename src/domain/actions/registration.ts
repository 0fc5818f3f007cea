import { and, asc, desc, eq, lt, ne, or, type Placeholder, type SQL } from "drizzle-orm";
import type { Database } from "../../db/client";
import { isUniqueViolation } from "../../db/errors";
import { insertWithinLimit } from "../../db/insert-within-limit";
import { type Read, read, readTwo, runRead } from "../../db/reads";
import { type ActionParameters, actionCalls, actions } from "../../db/schema";
import { type ShapedArgument, statement } from "../../db/statements";
import { conflict, forbidden, invalid, notFound } from "../../lib/errors";
import { type OutboundPolicy as AddressPolicy, assertRegistrableUrl } from "../../lib/public-address";
import { randomToken, sha256Hex } from "../../lib/secrets";
import { type EpochMs, iso, isoNow } from "../../lib/time";
import { type Principal, principalRef } from "../access/principals";
import { type Reach, type ReadReach, reachArgument, reached } from "../access/scope";
import { actionsRunOn, type Channel } from "../secretary/channels";
import { assertNoContactParameters } from "./contact-details";

/** Spec, Limits: "Connected actions per business: 10". */
export const MAX_ACTIONS_PER_BUSINESS = 10;
/** Spec, Connected action: "`GET /actions/{id}` adds `calls`: the 10 most recent calls". */
const RECENT_CALLS = 10;

/**
 * DESIGN.md, Action call records: a call still `pending` 30 s after it started was cut off mid-way (the Worker
 * stopped before recording its outcome; an answer takes at most 5 s). From then on it is an `error`, shown as such
 * and no longer among the calls of its customer message. Nothing is written for it: the queries decide by its age.
 */
export const CUT_OFF_AFTER_MS = 30_000;
export const cutOffBefore = (now: EpochMs) => iso(now - CUT_OFF_AFTER_MS);

const NO_PARAMETERS: ActionParameters = { type: "object", properties: {}, required: [] };

export type Action = typeof actions.$inferSelect;
export type ActionCall = typeof actionCalls.$inferSelect;

/** `required` is `[]` when the partner did not send it, also for actions stored before that default. */
const withRequiredList = (parameters: ActionParameters): ActionParameters & { required: string[] } => ({
  ...parameters,
  required: parameters.required ?? [],
});

/** Spec, Connected action: exactly the fields of its table; `source` is "api_key" or "oauth_app" (DESIGN.md). */
export function toActionObject(action: Action) {
  return {
    id: action.id,
    name: action.name,
    title: action.title,
    description: action.description,
    url: action.url,
    parameters: withRequiredList(action.parameters),
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

/**
 * DESIGN.md, Action call record: one of its four statuses. The queries answer a `pending` call only once it is cut
 * off (see CUT_OFF_AFTER_MS), so a pending call here is an error.
 */
export function toCallObject(call: ActionCall) {
  return {
    id: call.id,
    status: call.status === "pending" ? "error" : call.status,
    arguments: call.arguments,
    http_status: call.httpStatus,
    error: call.status === "pending" ? `cut off: no outcome within ${CUT_OFF_AFTER_MS / 1000} seconds` : call.error,
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
  if (input.parameters) assertNoContactParameters(input.parameters);
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

/** `GET /actions` (a partner's scope: its own side) and the owner's list (a business id: every side). */
const actionsWithin = statement<{ reach: ShapedArgument<Reach> }>()((db, { reach }) =>
  db.select().from(actions).where(reached(actions, reach)).orderBy(asc(actions.id)),
);

export const listActions = (reach: ReadReach) =>
  read(actionsWithin({ reach: reachArgument(reach) }), (rows) => rows.map(toActionObject));

const ofBusiness = (reach: Reach, id: number | Placeholder) => and(eq(actions.id, id), reached(actions, reach));

type OneAction = { reach: ShapedArgument<Reach>; id: number };
const actionWithin = statement<OneAction>()((db, { reach, id }) =>
  db.select().from(actions).where(ofBusiness(reach, id)),
);

/** The action `id` of the business, or the 404. */
export function actionRow(reach: ReadReach, id: number): Read<Action> {
  return read(actionWithin({ reach: reachArgument(reach), id }), ([action]) => {
    if (!action) throw actionNotFound();
    return action;
  });
}

export const findAction = (db: Database, businessId: string, id: number) => runRead(db, actionRow(businessId, id));

const recentCalls = statement<OneAction & { cutOff: string }>()((db, { reach, id, cutOff }) =>
  db
    .select()
    .from(actionCalls)
    .where(
      and(
        // The calls of the action only when it is within reach: another side's calls are not even read.
        eq(actionCalls.actionId, db.select({ id: actions.id }).from(actions).where(ofBusiness(reach, id))),
        or(ne(actionCalls.status, "pending"), lt(actionCalls.createdAt, cutOff)),
      ),
    )
    .orderBy(desc(actionCalls.id))
    .limit(RECENT_CALLS),
);

/** The action and its 10 most recent calls, read together; calls still under way are not listed yet. */
export function getAction(reach: ReadReach, id: number, now: EpochMs = Date.now()) {
  const argument = reachArgument(reach);
  return readTwo(
    actionWithin({ reach: argument, id }),
    recentCalls({ reach: argument, id, cutOff: cutOffBefore(now) }),
    ([action], calls) => {
      if (!action) throw actionNotFound();
      return { ...toActionObject(action), calls: calls.map(toCallObject) };
    },
  );
}

/**
 * Spec, Connected action `enabled`: "PATCH /actions/{id} with a new url → false, until the owner approves again".
 * Only what differs is written; a PATCH that changes nothing leaves `updatedAt` as it was.
 */
export async function patchAction(
  policy: AddressPolicy,
  db: Database,
  action: Action,
  input: { title?: string; description?: string; url?: string; parameters?: ActionParameters },
) {
  if (input.url !== undefined) assertRegistrableUrl(policy, input.url);
  if (input.parameters) assertNoContactParameters(input.parameters);
  const changes: Partial<Action> = {};
  for (const key of ["title", "description", "url"] as const) {
    const value = input[key];
    if (value !== undefined && value !== action[key]) changes[key] = value;
  }
  const parameters = input.parameters && withRequiredList(input.parameters);
  if (parameters && JSON.stringify(parameters) !== JSON.stringify(withRequiredList(action.parameters))) {
    changes.parameters = parameters;
  }
  if (Object.keys(changes).length === 0) return toActionObject(action);
  if (changes.url !== undefined) changes.enabled = false;
  // An action that was on, switched off by this change, waits for the owner's review (the overview lists it).
  const offReason = changes.url !== undefined && action.enabled ? { offReason: "changed" as const } : {};
  const [updated] = await db
    .update(actions)
    .set({ ...changes, ...offReason, updatedAt: isoNow() })
    .where(ofBusiness(action.businessId, action.id))
    .returning();
  // Deleted between the read and this write.
  if (!updated) throw actionNotFound();
  return toActionObject(updated);
}

export async function deleteAction(db: Database, reach: Reach, id: number) {
  const deleted = await db.delete(actions).where(ofBusiness(reach, id)).returning({ id: actions.id });
  if (deleted.length === 0) throw actionNotFound();
}

/**
 * What the owner reviews before switching an action on (DESIGN.md, dashboard: "it applies only to the version (url,
 * description, parameters) the owner reviewed"): a digest of exactly those three, which the dashboard's form carries.
 */
export function reviewedVersion(action: Pick<Action, "url" | "description" | "parameters">): string {
  return sha256Hex(JSON.stringify([action.url, action.description, withRequiredList(action.parameters)]));
}

const changedSinceReview = () =>
  conflict("The action has changed since it was reviewed: review it again before switching it on.");

/**
 * The owner switches an action on or off (spec: "Only the business owner can switch an action ... on or off").
 * Switching on is guarded like an intake's: `reviewed`, when given, is the `reviewedVersion` the owner saw, and a
 * different current version is a 409. The write is guarded by the url, description and parameters it read, in the
 * same statement, so a PATCH landing between the read and the write is never switched on unseen.
 */
export async function switchAction(
  db: Database,
  businessId: string,
  actionId: number,
  enabled: boolean,
  options: { reviewed?: string } = {},
) {
  let unchanged: SQL | undefined;
  if (enabled) {
    const action = await findAction(db, businessId, actionId);
    if (options.reviewed !== undefined && options.reviewed !== reviewedVersion(action)) throw changedSinceReview();
    unchanged = and(
      eq(actions.url, action.url),
      eq(actions.description, action.description),
      eq(actions.parameters, action.parameters),
    );
  }
  const [updated] = await db
    .update(actions)
    .set({ enabled, offReason: enabled ? null : "owner", updatedAt: isoNow() })
    .where(and(ofBusiness(businessId, actionId), unchanged))
    .returning();
  if (updated) return toActionObject(updated);
  // Nothing matched: the action is gone (404), or it changed after it was read.
  await findAction(db, businessId, actionId);
  throw changedSinceReview();
}

/** What the Secretary may call on a channel (DESIGN.md, context endpoint): enabled actions, none on phone calls. */
export async function actionsForSecretary(db: Database, businessId: string, channel: Channel) {
  if (!actionsRunOn(channel)) return [];
  const rows = await db
    .select({ name: actions.name, description: actions.description, parameters: actions.parameters })
    .from(actions)
    .where(and(eq(actions.businessId, businessId), eq(actions.enabled, true)))
    .orderBy(asc(actions.name));
  return rows.map((row) => ({ ...row, parameters: withRequiredList(row.parameters) }));
}
