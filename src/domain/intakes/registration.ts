import { and, asc, eq, isNull, type Placeholder, type SQL } from "drizzle-orm";
import { isUniqueViolation } from "../../db/d1-failures";
import { insertWithinLimit } from "../../db/insert-within-limit";
import { mapRead, type Read, read, runRead } from "../../db/reads";
import { type IntakeContent, type IntakeField, intakes } from "../../db/schema";
import { type ShapedArgument, statement } from "../../db/statements";
import type { Dependencies } from "../../dependencies";
import { conflict, forbidden, invalidField, notFound } from "../../lib/api-error";
import { iso } from "../../lib/time";
import type { CreateIntakeInput, PatchIntakeInput } from "../../schemas/intake-bodies";
import type { IntakeFieldInput } from "../../schemas/intake-fields";
import type { IntakeObject } from "../../schemas/intakes";
import { type Principal, type PrincipalRef, principalRef } from "../access/principals";
import { type Side, type SqlSide, sideArgument, sideOf } from "../access/scope";
import type { WebhookEndpoint } from "../webhooks/endpoints";
import { changedRows, intakeSwitched, withEndpoints, writeSwitch } from "../webhooks/lifecycle";

/*
 * The partner's side of an intake: registering, reading, changing and deleting the intakes of its own key or app
 * (docs/intakes.md, Ownership). A change switches the intake off until the owner reviews it (owner-decisions.ts).
 */

/** At most 5 intakes per business, all keys and apps together (docs/intakes.md, The limit). */
export const MAX_INTAKES_PER_BUSINESS = 5;

export type IntakeRow = typeof intakes.$inferSelect;

/**
 * A question as it is stored and answered: `required` always, `options` only on `select`, `help` only when it says
 * something (an empty, blank or null `help` is no help). Keys in one order, so that two equal questions serialise
 * equally.
 */
export function normalizeField(field: IntakeFieldInput | IntakeField): IntakeField {
  return {
    id: field.id,
    label: field.label,
    type: field.type,
    required: field.required ?? false,
    ...(field.type === "select" && field.options ? { options: [...field.options] } : {}),
    ...(field.help?.trim() ? { help: field.help } : {}),
  };
}

/** What the owner approves (title, description and every question), normalised. */
export function contentOf(intake: { title: string; description: string; fields: IntakeField[] }): IntakeContent {
  return { title: intake.title, description: intake.description, fields: intake.fields.map(normalizeField) };
}

/** Whether two contents are the same intake for the customer: same texts, same questions in the same order. */
export const sameContent = (a: IntakeContent, b: IntakeContent) =>
  JSON.stringify(contentOf(a)) === JSON.stringify(contentOf(b));

/**
 * Exactly `{ id, name, title, description, fields, enabled, createdAt, updatedAt }` (docs/intakes.md, The intake
 * object).
 */
export function toIntakeObject(row: IntakeRow): IntakeObject {
  return {
    id: row.id,
    name: row.name,
    title: row.title,
    description: row.description,
    fields: row.fields.map(normalizeField),
    enabled: row.enabled,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

/**
 * Intakes are never shared: each belongs to the key or app that made it (docs/intakes.md, Ownership). Every partner
 * query of an intake carries this condition, so an intake of another key or app of the business is simply not found.
 */
function ownedBy(scope: SqlSide): SQL | undefined {
  return and(
    eq(intakes.businessId, scope.businessId),
    scope.apiKeyId === null ? isNull(intakes.apiKeyId) : eq(intakes.apiKeyId, scope.apiKeyId),
    scope.oauthGrantId === null ? isNull(intakes.oauthGrantId) : eq(intakes.oauthGrantId, scope.oauthGrantId),
  );
}

/**
 * One sentence for every intake the credential cannot see: another key's or app's, another business's, a deleted
 * one, or a path id that is not a number. The partner cannot tell them apart (docs/intakes.md, Ownership).
 */
export const intakeNotFound = () => notFound("No intake with that id exists for this credential.");

export const ownedIntake = (scope: SqlSide, id: number | Placeholder) => and(eq(intakes.id, id), ownedBy(scope));

/** An intake of the scope's side, by id (a statement's arguments). */
export type OneIntake = { side: ShapedArgument<SqlSide>; id: number };

const intakeWithin = statement<OneIntake>()((db, { side, id }) =>
  db.select().from(intakes).where(ownedIntake(side, id)),
);

/** The intake `id` of the principal, or the 404. */
export function ownedIntakeRow(reach: Side, id: number): Read<IntakeRow> {
  return read(intakeWithin({ side: sideArgument(reach), id }), ([row]) => {
    if (!row) throw intakeNotFound();
    return row;
  });
}

/**
 * `POST /intakes` → the intake with `enabled` false (docs/intakes.md, The limit). The 5-intake limit counts every key
 * and app of the business and is checked in the same transaction as the insert (`insertWithinLimit`), so concurrent
 * creates never pass it; the name's uniqueness is the unique index `intakes_business_name`, so concurrent creates of
 * one name store one.
 */
export async function createIntake(deps: Dependencies, principal: Principal, input: CreateIntakeInput) {
  const now = iso(deps.clock());
  let row: IntakeRow | undefined;
  try {
    row = await insertWithinLimit(
      deps.db,
      intakes,
      {
        businessId: principal.business.id,
        name: input.name,
        ...contentOf({ ...input, fields: input.fields.map(normalizeField) }),
        enabled: false,
        version: 1,
        ...principalRef(principal),
        createdAt: now,
        updatedAt: now,
      },
      MAX_INTAKES_PER_BUSINESS,
    );
  } catch (error) {
    if (isUniqueViolation(error)) {
      throw invalidField(
        `The field "name" is ${JSON.stringify(input.name)}, which another intake of this business already uses; names are unique within the business.`,
        "name",
      );
    }
    throw error;
  }
  if (!row) {
    throw forbidden(
      `A business can have at most ${MAX_INTAKES_PER_BUSINESS} intakes, counted across every key and app: delete one before registering another.`,
      "limit_reached",
    );
  }
  return toIntakeObject(row);
}

/** `GET /intakes` lists the calling principal's own intakes, oldest first (docs/intakes.md, Ownership). */
const intakesWithin = statement<{ side: ShapedArgument<SqlSide> }>()((db, { side }) =>
  db.select().from(intakes).where(ownedBy(side)).orderBy(asc(intakes.id)),
);

export const listIntakes = (reach: Side): Read<IntakeObject[]> =>
  read(intakesWithin({ side: sideArgument(reach) }), (rows) => rows.map(toIntakeObject));

/** The key or app an intake belongs to, the one that made it (docs/intakes.md, Ownership). */
export const intakeOwner = (row: IntakeRow): PrincipalRef => ({
  apiKeyId: row.apiKeyId,
  oauthGrantId: row.oauthGrantId,
});

export const getIntake = (reach: Side, intakeId: number): Read<IntakeObject> =>
  mapRead(ownedIntakeRow(reach, intakeId), toIntakeObject);

/** How many times a PATCH re-reads when another write got in between its read and its write. */
const PATCH_ATTEMPTS = 3;

/**
 * `PATCH /intakes/{id}` (docs/intakes.md, PATCH): the same intake, compared normalised, writes nothing; a real change
 * is stored with the next version, switched off, with `intake.disabled` (`changed`) to its owner when it was on.
 * Guarded by the version and state it was computed from: after a concurrent PATCH or switch it compares again.
 * `current` is what the request read with its credential (one round trip); without it, it is read here.
 */
export async function patchIntake(
  deps: Dependencies,
  principal: Principal,
  intakeId: number,
  input: PatchIntakeInput,
  current?: { record: IntakeRow; endpoints: WebhookEndpoint[] },
) {
  const { db } = deps;
  const scope = sideOf(principal);
  const readAgain = () => runRead(db, withEndpoints(ownedIntakeRow(scope, intakeId), scope));
  let { record: row, endpoints } = current ?? (await readAgain());
  for (let attempt = 0; attempt < PATCH_ATTEMPTS; attempt++) {
    if (attempt > 0) ({ record: row, endpoints } = await readAgain());
    if (input.name !== undefined && input.name !== row.name) {
      throw invalidField(
        `The field "name" cannot be changed after creation: send it back as ${JSON.stringify(row.name)} or leave it out.`,
        "name",
      );
    }
    if (input.enabled !== undefined && input.enabled !== row.enabled) {
      throw invalidField(
        `The field "enabled" cannot be changed through the API: only the business owner switches an intake on or off. Send it back as ${row.enabled} or leave it out.`,
        "enabled",
      );
    }
    const next = contentOf({
      title: input.title ?? row.title,
      description: input.description ?? row.description,
      fields: (input.fields ?? row.fields).map(normalizeField),
    });
    if (sameContent(next, contentOf(row))) return toIntakeObject(row);
    const changed = { ...row, ...next, version: row.version + 1, enabled: false, updatedAt: iso(deps.clock()) };
    const drafts = row.enabled ? [intakeSwitched(toIntakeObject(changed), intakeOwner(row), "changed")] : [];
    const update = db
      .update(intakes)
      .set({ ...next, version: changed.version, enabled: false, updatedAt: changed.updatedAt })
      .where(and(eq(intakes.id, row.id), eq(intakes.version, row.version), eq(intakes.enabled, row.enabled)));
    const target = { business: principal.business, endpoints };
    if (await writeSwitch(deps, target, drafts, [update, changedRows(deps, 1)])) return toIntakeObject(changed);
  }
  throw conflict("The intake was changed by another request at the same moment; send this change again.");
}

/**
 * Deletes the one intake `where` selects and, by the foreign key's cascade, its responses: one statement, so all or
 * nothing; none selected is the 404. The partner's DELETE and the owner's removal (owner-removal.ts) differ only in
 * `where`.
 */
export async function deleteIntakeWhere(deps: Dependencies, where: SQL | undefined) {
  const deleted = await deps.db.delete(intakes).where(where).returning({ id: intakes.id });
  if (deleted.length === 0) throw intakeNotFound();
}

/**
 * `DELETE /intakes/{id}` removes the intake and, by the foreign key's cascade, its responses (docs/intakes.md,
 * Responses).
 */
export const deleteIntake = (deps: Dependencies, principal: Principal, id: number) =>
  deleteIntakeWhere(deps, ownedIntake(sideOf(principal), id));
