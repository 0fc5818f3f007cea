import { and, asc, desc, eq, isNull, lt, ne, or, type Placeholder } from "drizzle-orm";
import type { Database } from "../../db/client";
import { isUniqueViolation } from "../../db/errors";
import { insertWithinLimit } from "../../db/insert-within-limit";
import { type Read, read, readTwo, runRead } from "../../db/reads";
import { type ActionParameters, actionCalls, actions } from "../../db/schema";
import { type ShapedArgument, statement } from "../../db/statements";
import { conflict, forbidden, invalid, notFound } from "../../lib/errors";
import { type OutboundPolicy as AddressPolicy, assertRegistrableUrl } from "../../lib/public-address";
import { sha256Hex } from "../../lib/secrets";
import { newSigningSecret } from "../../lib/signing";
import { type EpochMs, iso, isoNow } from "../../lib/time";
import type { Business } from "../access/businesses";
import { type Principal, principalRef } from "../access/principals";
import { type Reach, type ReadReach, reachArgument, reached } from "../access/scope";
import { actionsRunOn, type Channel } from "../secretary/channels";
import type { WebhookEndpoint } from "../webhooks/endpoints";
import {
  actionChangeAccepted,
  actionSwitched,
  changedRows,
  type Enqueue,
  type EventTarget,
  type LifecycleReason,
  readForSwitch,
  writeSwitch,
} from "../webhooks/lifecycle";
import { actionChange } from "./change-review";
import { assertNoContactParameters } from "./contact-details";

/** Spec, Limits: "Connected actions per business: 10". */
export const MAX_ACTIONS_PER_BUSINESS = 10;
/** Spec, Connected action: "`GET /actions/{id}` adds `calls`: the 10 most recent calls". */
export const RECENT_CALLS = 10;

/**
 * A call still `pending` 30 s after it started was cut off mid-way (the Worker stopped before recording its outcome;
 * an answer takes at most 5 s). From then on it is an `error`, shown as such and no longer among the calls of its
 * customer message (docs/decisions.md, Calls). Nothing is written for it: the queries decide by its age.
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

/**
 * The description and parameters the Secretary uses: those the owner approved (docs/decisions.md, Changes to a
 * switched-on action). An action that is off has none approved; the owner's Test calls the current version.
 */
type Versions = Pick<Action, "enabled" | "description" | "parameters" | "approvedDescription" | "approvedParameters">;

export function approvedVersion(action: Versions) {
  return {
    description: action.approvedDescription ?? action.description,
    parameters: withRequiredList(action.approvedParameters ?? action.parameters),
  };
}

const currentVersion = (action: Versions) => ({
  description: action.description,
  parameters: withRequiredList(action.parameters),
});

/** The change the owner has not accepted yet, or null: none, or the action is off (switching on reviews it whole). */
export function pendingChange(action: Versions) {
  return action.enabled ? actionChange(approvedVersion(action), currentVersion(action)) : null;
}

/**
 * Spec, Connected action: the fields of its table; `source` is "api_key" or "oauth_app" (docs/decisions.md, Decisions
 * the design made where the contract is silent), and `changePending`, true while a change of description or parameters
 * waits for the owner.
 */
export function toActionObject(action: Action) {
  return {
    id: action.id,
    name: action.name,
    title: action.title,
    description: action.description,
    url: action.url,
    parameters: withRequiredList(action.parameters),
    enabled: action.enabled,
    changePending: pendingChange(action) !== null,
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
 * A call as its record is answered, with one of the four statuses of the spec's call history (docs/decisions.md,
 * Calls). The queries answer a `pending` call only once it is cut off (see CUT_OFF_AFTER_MS), so a pending call here
 * is an error.
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
  const secret = newSigningSecret();
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

/** How many times a change re-reads when another write got in between its read and its write. */
const WRITE_ATTEMPTS = 3;

const changedMeanwhile = () =>
  conflict("The action was changed by another request at the same moment; send this change again.");

/** The action is still as `action` was read: what a change was decided on, and what its event will show. */
const asRead = (action: Action) =>
  and(
    eq(actions.enabled, action.enabled),
    eq(actions.title, action.title),
    eq(actions.description, action.description),
    eq(actions.url, action.url),
    eq(actions.parameters, action.parameters),
    action.approvedDescription === null
      ? isNull(actions.approvedDescription)
      : eq(actions.approvedDescription, action.approvedDescription),
    action.approvedParameters === null
      ? isNull(actions.approvedParameters)
      : eq(actions.approvedParameters, action.approvedParameters),
  );

/**
 * Writes `changes` to the action as it was read, with the lifecycle event they mean in one D1 batch
 * (src/domain/webhooks/lifecycle.ts): `action.change_accepted` for an accepted change, else `action.enabled` or
 * `action.disabled` for `reason` when `enabled` changes. Answers the action as written, or undefined when it changed
 * meanwhile (nothing written).
 */
async function writeAction(
  db: Database,
  target: EventTarget,
  action: Action,
  changes: Partial<Action>,
  event: LifecycleReason | "change_accepted",
  enqueue?: Enqueue,
) {
  const written = { ...action, ...changes, updatedAt: isoNow() };
  const object = toActionObject(written);
  const drafts =
    event === "change_accepted"
      ? [actionChangeAccepted(object, action.oauthGrantId)]
      : written.enabled === action.enabled
        ? []
        : [actionSwitched(object, action.oauthGrantId, event)];
  const update = db
    .update(actions)
    .set({ ...changes, updatedAt: written.updatedAt })
    .where(and(ofBusiness(action.businessId, action.id), asRead(action)));
  const ok = await writeSwitch(db, target, drafts, [update, changedRows(db, 1)], enqueue);
  return ok ? object : undefined;
}

/**
 * Spec, Connected action `enabled`: "PATCH /actions/{id} with a new url → false, until the owner approves again"; an
 * action that was on then sends `action.disabled` with reason `changed` to its side (docs/webhooks.md, Lifecycle
 * events). A new description or parameters of an action that is on are stored and answered, `enabled` stays true, and
 * the Secretary keeps the approved version until the owner accepts the change (`acceptActionChange`); a new title alone
 * is seen only by the owner and needs no review. Only what differs is written; a PATCH that changes nothing leaves
 * `updatedAt` as it was. `current` is the action and its side's endpoints as the request read them with its credential;
 * a write that another one overtook compares again with what that one stored.
 */
export async function patchAction(
  policy: AddressPolicy,
  db: Database,
  business: Business,
  current: { record: Action; endpoints: WebhookEndpoint[] },
  input: { title?: string; description?: string; url?: string; parameters?: ActionParameters },
  enqueue?: Enqueue,
) {
  if (input.url !== undefined) assertRegistrableUrl(policy, input.url);
  if (input.parameters) assertNoContactParameters(input.parameters);
  const parameters = input.parameters && withRequiredList(input.parameters);
  let action = current.record;
  for (let attempt = 1; attempt <= WRITE_ATTEMPTS; attempt++) {
    if (attempt > 1) action = await findAction(db, business.id, action.id);
    const changes: Partial<Action> = {};
    for (const key of ["title", "description", "url"] as const) {
      const value = input[key];
      if (value !== undefined && value !== action[key]) changes[key] = value;
    }
    if (parameters && JSON.stringify(parameters) !== JSON.stringify(withRequiredList(action.parameters))) {
      changes.parameters = parameters;
    }
    if (Object.keys(changes).length === 0) return toActionObject(action);
    if (changes.url !== undefined) {
      Object.assign(changes, NOTHING_APPROVED);
      changes.enabled = false;
      // An action that was on, switched off by this change, waits for the owner's review (the overview lists it).
      if (action.enabled) changes.offReason = "changed";
    }
    const written = await writeAction(
      db,
      { business, endpoints: current.endpoints },
      action,
      changes,
      "changed",
      enqueue,
    );
    if (written) return written;
  }
  throw changedMeanwhile();
}

export async function deleteAction(db: Database, reach: Reach, id: number) {
  const deleted = await db.delete(actions).where(ofBusiness(reach, id)).returning({ id: actions.id });
  if (deleted.length === 0) throw actionNotFound();
}

/**
 * What the owner reviews before switching an action on: switching on applies only to the version (url, description,
 * parameters) the owner reviewed (docs/decisions.md, Calls), so this is a digest of exactly those three, which the
 * dashboard's form carries.
 */
export function reviewedVersion(action: Pick<Action, "url" | "description" | "parameters">): string {
  return sha256Hex(JSON.stringify([action.url, action.description, withRequiredList(action.parameters)]));
}

/** An action that is off has no approved version: switching it on approves the one the owner reviewed. */
const NOTHING_APPROVED = { approvedDescription: null, approvedParameters: null } satisfies Partial<Action>;

/** What switching on or accepting a change approves: the action's current description and parameters. */
const approving = (action: Action) => ({
  approvedDescription: action.description,
  approvedParameters: action.parameters,
});

const changedSinceReview = () =>
  conflict("The action has changed since it was reviewed: review it again before switching it on.");

/**
 * The owner switches an action on or off (spec: "Only the business owner can switch an action ... on or off"), and its
 * side gets `action.enabled` or `action.disabled` with reason `owner` (docs/architecture.md, Lifecycle events).
 * Switching on is guarded like an intake's: `reviewed`, when given, is the `reviewedVersion` the owner saw, and a
 * different current version is a 409; without it, the version first read is the one reviewed. The write is guarded by
 * what it read, in the same batch, so a PATCH landing between the read and the write is never switched on unseen.
 * Switching off an action that is off marks it as the owner's (the overview no longer lists it as waiting), and sends
 * nothing.
 */
export async function switchAction(
  db: Database,
  businessId: string,
  actionId: number,
  enabled: boolean,
  options: { reviewed?: string; enqueue?: Enqueue } = {},
) {
  let reviewed = options.reviewed;
  for (let attempt = 1; attempt <= WRITE_ATTEMPTS; attempt++) {
    const { record: action, ...target } = await readForSwitch(db, businessId, actionRow(businessId, actionId));
    if (enabled) {
      reviewed ??= reviewedVersion(action);
      if (reviewed !== reviewedVersion(action)) throw changedSinceReview();
      if (action.enabled) return toActionObject(action);
    }
    const changes = enabled
      ? { enabled, offReason: null, ...approving(action) }
      : { enabled, offReason: "owner" as const, ...NOTHING_APPROVED };
    const written = await writeAction(db, target, action, changes, "owner", options.enqueue);
    if (written) return written;
  }
  throw changedMeanwhile();
}

/**
 * The owner accepts a partner's change of a switched-on action (docs/decisions.md, Changes to a switched-on action):
 * the Secretary uses the current description and parameters from now on, and the action's side gets
 * `action.change_accepted`. Guarded as switching on is: `reviewed` is the `reviewedVersion` the owner saw, and a
 * different current version (a PATCH meanwhile) is a 409 that shows the change again. An action that is off has
 * nothing to accept (a 409: switching it on reviews it whole); one without a waiting change is answered as it is.
 */
export async function acceptActionChange(
  db: Database,
  businessId: string,
  actionId: number,
  options: { reviewed: string; enqueue?: Enqueue },
) {
  for (let attempt = 1; attempt <= WRITE_ATTEMPTS; attempt++) {
    const { record: action, ...target } = await readForSwitch(db, businessId, actionRow(businessId, actionId));
    if (options.reviewed !== reviewedVersion(action)) throw changedSinceReview();
    if (!action.enabled) throw conflict("The action is switched off: switch it on to approve it as it now is.");
    if (!pendingChange(action)) return toActionObject(action);
    const written = await writeAction(db, target, action, approving(action), "change_accepted", options.enqueue);
    if (written) return written;
  }
  throw changedMeanwhile();
}

/**
 * What the Secretary may call on a channel: enabled actions as the owner approved them (docs/decisions.md, Changes to
 * a switched-on action), none on phone calls (docs/decisions.md, Calls).
 */
export async function actionsForSecretary(db: Database, businessId: string, channel: Channel) {
  if (!actionsRunOn(channel)) return [];
  const rows = await db
    .select()
    .from(actions)
    .where(and(eq(actions.businessId, businessId), eq(actions.enabled, true)))
    .orderBy(asc(actions.name));
  return rows.map((action) => ({ name: action.name, ...approvedVersion(action) }));
}
