import { eq, sql } from "drizzle-orm";
import { isGuardAbort } from "../../db/d1-failures";
import type { Read } from "../../db/reads";
import { businesses } from "../../db/schema";
import { guard } from "../../db/snapshot-guard";
import { type Preparable, runStatements, statement } from "../../db/statements";
import type { Dependencies } from "../../dependencies";
import { notFound } from "../../lib/api-error";
import type { ActionObject } from "../../schemas/actions";
import type { LifecycleReason } from "../../schemas/events";
import type { IntakeObject } from "../../schemas/intakes";
import type { Business } from "../access/businesses";
import type { PrincipalRef } from "../access/principals";
import type { Reach } from "../access/scope";
import { endpointRows, type WebhookEndpoint } from "./endpoints";
import { type EventDraft, writeEvents } from "./outbox/write";

/*
 * Lifecycle events (docs/architecture.md, Lifecycle events): `action.enabled`, `action.disabled`,
 * `action.change_accepted`, `intake.enabled` and `intake.disabled`, so that a partner knows when its integration is
 * live without polling. Each is written in the
 * same D1 batch as the switch it reports (`writeSwitch`): if one is written, so is the other.
 */

/**
 * Why the record was switched: `owner`, in the dashboard; `changed`, a partner's PATCH switched it off (a new url for
 * an action; a change of its content for an intake), or a refresh found its MCP tool no longer usable;
 * `credential_revoked`, a key was revoked: the intakes it registered (docs/guides/webhooks.md, Lifecycle events), and
 * the API keys' actions the owner chose to switch off with it (docs/decisions.md, When access ends); `removed`, its
 * MCP server no longer lists its tool (docs/guides/connected-actions.md, From an MCP server).
 */
export type { LifecycleReason };

/**
 * `action.enabled` or `action.disabled` `{ action, reason }`, with the action as `GET /actions` shows it after the
 * switch, to the endpoints of its owner side only (docs/architecture.md, Principals and owner sides: an action belongs
 * to the app connection that registered it, or to the business's API keys together).
 */
export const actionSwitched = (action: ActionObject, side: number | null, reason: LifecycleReason): EventDraft => ({
  event: action.enabled ? "action.enabled" : "action.disabled",
  data: { action, reason },
  audience: { side },
});

/**
 * `action.change_accepted` `{ action }`: the owner accepted a change of the action's description or parameters, and
 * the Secretary uses the version in `action` from now on (docs/webhooks.md, Lifecycle events); to its owner side only.
 */
export const actionChangeAccepted = (action: ActionObject, side: number | null): EventDraft => ({
  event: "action.change_accepted",
  data: { action },
  audience: { side },
});

/**
 * `intake.enabled` or `intake.disabled` `{ intake, reason }`, with the intake as `GET /intakes/{id}` shows it after
 * the switch, to the endpoints of the key or app that registered it only: an intake belongs to that one principal
 * (docs/intakes.md, Ownership), and so does its `intake.completed`.
 */
export const intakeSwitched = (intake: IntakeObject, owner: PrincipalRef, reason: LifecycleReason): EventDraft => ({
  event: intake.enabled ? "intake.enabled" : "intake.disabled",
  data: { intake, reason },
  audience: { principal: owner },
});

/**
 * A guard (src/db/snapshot-guard.ts) for the statement before it: it changed exactly `rows` rows, or the batch
 * aborts. A switch's update names in its WHERE the state the switch was decided on; this makes "nothing matched"
 * (the record changed meanwhile) undo the whole batch, its events with it.
 */
export const changedRows = (deps: Dependencies, rows: number) => guard(deps.db, sql`changes() = ${rows}`);

/** What a switch's events are written with: the business (for the envelope) and its endpoints, read beforehand. */
export type EventTarget = { business: Business; endpoints: WebhookEndpoint[] };

/**
 * A record's read with the endpoints `reach` sees, in the same round trip: a partner's change reads its record and its
 * side's endpoints with its credential (docs/architecture.md, Performance budget: a write makes at most two round
 * trips).
 */
export function withEndpoints<T>(record: Read<T>, reach: Reach): Read<{ record: T; endpoints: WebhookEndpoint[] }> {
  const endpoints = endpointRows(reach);
  const split = record.statements.length;
  return {
    statements: [...record.statements, ...endpoints.statements],
    answer: (results) => ({
      record: record.answer(results.slice(0, split)),
      endpoints: endpoints.answer(results.slice(split)),
    }),
  };
}

const businessById = statement<{ business: string }>()((db, { business }) =>
  db.select().from(businesses).where(eq(businesses.id, business)),
);

/**
 * A record's read with its business and every endpoint of it: one round trip, each statement rendered once. The
 * business is undefined where this database has no row of it; the record's answer runs first, so that a record that
 * does not exist is its own 404.
 */
export async function readWithBusiness<T>(
  deps: Dependencies,
  businessId: string,
  record: Read<T>,
): Promise<{ business: Business | undefined; endpoints: WebhookEndpoint[]; record: T }> {
  const read = withEndpoints(record, businessId);
  const [businessRows, ...results] = await runStatements(deps.db, [
    businessById({ business: businessId }),
    ...read.statements,
  ]);
  const { record: answer, endpoints } = read.answer(results);
  const [business] = businessRows as Business[];
  return { business, endpoints, record: answer };
}

/** The owner's switch reads its record with the business and every endpoint of it: one round trip. */
export async function readForSwitch<T>(
  deps: Dependencies,
  businessId: string,
  record: Read<T>,
): Promise<EventTarget & { record: T }> {
  const { business, endpoints, record: answer } = await readWithBusiness(deps, businessId, record);
  if (!business) throw notFound("No business has that id.");
  return { business, endpoints, record: answer };
}

/**
 * Writes a switch (`statements`, guarded by `changedRows`) and the lifecycle events it means in ONE D1 batch, then
 * hands their deliveries to the queue after the answer (`deps.enqueue`). Answers false when a guard
 * aborted the batch: nothing was written, and the caller reads again and decides anew.
 */
export async function writeSwitch(
  deps: Dependencies,
  target: EventTarget,
  drafts: EventDraft[],
  statements: Preparable<unknown>[],
): Promise<boolean> {
  try {
    const { deliveryIds } = await writeEvents(deps, target.business, target.endpoints, drafts, statements);
    deps.enqueue(deliveryIds);
    return true;
  } catch (error) {
    if (isGuardAbort(error)) return false;
    throw error;
  }
}
