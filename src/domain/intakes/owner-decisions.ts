import { and, asc, eq, not, type Placeholder, sql } from "drizzle-orm";
import { read, runRead } from "../../db/reads";
import { apiKeys, intakes, oauthGrants } from "../../db/schema";
import { statement } from "../../db/statements";
import type { Dependencies } from "../../dependencies";
import { conflict, forbidden } from "../../lib/api-error";
import { iso } from "../../lib/time";
import { changedRows, intakeSwitched, readForSwitch, writeSwitch } from "../webhooks/lifecycle";
import { changeList } from "./change-list";
import { contactDetailsOf, identityQuestionsOf } from "./question-detection";
import { contentOf, intakeNotFound, intakeOwner, normalizeField, toIntakeObject } from "./registration";

/*
 * The owner's side of an intake (docs/guides/intakes.md, Approval by the owner): the dashboard's list,
 * the review, and switching on or off, which only the owner does. Scoped by the business alone, never by a partner
 * principal. The rules for contact details and identity questions are in docs/intakes.md, The approval summary.
 */

/**
 * Whether the key or app that registered the intake has been revoked or disconnected, which switches it off for good
 * (docs/guides/intakes.md, Approval by the owner). Written as SQL so that it can guard the switch-on in the same
 * statement as the write: a revocation that lands first always wins.
 */
export const registeredByRevokedCredential = sql<boolean>`(exists (select 1 from ${apiKeys} where ${apiKeys.id} = ${intakes.apiKeyId} and ${apiKeys.revokedAt} is not null) or exists (select 1 from ${oauthGrants} where ${oauthGrants.id} = ${intakes.oauthGrantId} and ${oauthGrants.revokedAt} is not null))`;

/** The intake `id` of the business, whoever registered it: what every owner read and write of one intake is scoped by. */
export const ofBusiness = (businessId: string | Placeholder, id: number | Placeholder) =>
  and(eq(intakes.id, id), eq(intakes.businessId, businessId));

/** The intake `id` of the business, and whether the key or app that registered it is revoked (1) or not (0). */
export const businessIntakeWithin = statement<{ business: string; id: number }>()((db, { business, id }) =>
  db
    .select({ intake: intakes, revoked: sql<number>`${registeredByRevokedCredential}` })
    .from(intakes)
    .where(ofBusiness(business, id)),
);

/** The intake `id` of the business, whoever registered it, and whether that key or app has lost its access. */
const businessIntake = (businessId: string, id: number) =>
  read(businessIntakeWithin({ business: businessId, id }), ([found]) => {
    if (!found) throw intakeNotFound();
    return { intake: found.intake, credentialRevoked: Boolean(found.revoked) };
  });

const revokedCredential = () =>
  forbidden(
    "The key or app that registered this intake has been revoked or disconnected, so the intake cannot be switched on.",
    "forbidden",
  );

const changedSinceReview = () =>
  conflict("The intake has changed since it was reviewed: review it again before switching it on.", "invalid_state");

/** How many times a switch re-reads when another write got in between its read and its write. */
const SWITCH_ATTEMPTS = 3;

const changedMeanwhile = () =>
  conflict("The intake was changed by another request at the same moment; switch it again.");

/**
 * The owner switches the intake on, having seen every question and the contact details (docs/intakes.md, The owner's
 * side), and its owner gets `intake.enabled` (`owner`). Records the approved version and content. A current version
 * other than the one reviewed is a 409, and the write is guarded by what it read and the credential not being revoked,
 * so no concurrent PATCH or revocation is overtaken. An intake that is on stays as it is.
 */
export async function switchIntakeOn(
  deps: Dependencies,
  businessId: string,
  intakeId: number,
  options: { version?: number } = {},
) {
  let reviewed = options.version;
  for (let attempt = 1; attempt <= SWITCH_ATTEMPTS; attempt++) {
    const { record, ...target } = await readForSwitch(deps, businessId, businessIntake(businessId, intakeId));
    const { intake } = record;
    if (record.credentialRevoked) throw revokedCredential();
    reviewed ??= intake.version;
    if (reviewed !== intake.version) throw changedSinceReview();
    if (intake.enabled) return toIntakeObject(intake);
    const approval = { approvedVersion: intake.version, approvedContent: contentOf(intake) };
    const switched = { ...intake, ...approval, enabled: true, updatedAt: iso(deps.clock()) };
    const update = deps.db
      .update(intakes)
      .set({ ...approval, enabled: true, updatedAt: switched.updatedAt })
      .where(
        and(
          ofBusiness(businessId, intake.id),
          eq(intakes.version, intake.version),
          eq(intakes.enabled, false),
          not(registeredByRevokedCredential),
        ),
      );
    const drafts = [intakeSwitched(toIntakeObject(switched), intakeOwner(intake), "owner")];
    if (await writeSwitch(deps, target, drafts, [update, changedRows(deps, 1)])) {
      return toIntakeObject(switched);
    }
    // Something got in between the read and the write: the next read says what.
  }
  throw changedMeanwhile();
}

/**
 * The owner switches the intake off (docs/intakes.md, The owner's side), and its owner gets `intake.disabled` with
 * reason `owner`. An intake that is off stays as it is, and nothing is sent.
 */
export async function switchIntakeOff(deps: Dependencies, businessId: string, intakeId: number) {
  for (let attempt = 1; attempt <= SWITCH_ATTEMPTS; attempt++) {
    const { record, ...target } = await readForSwitch(deps, businessId, businessIntake(businessId, intakeId));
    const { intake } = record;
    if (!intake.enabled) return toIntakeObject(intake);
    const switched = { ...intake, enabled: false, updatedAt: iso(deps.clock()) };
    const update = deps.db
      .update(intakes)
      .set({ enabled: false, updatedAt: switched.updatedAt })
      .where(and(ofBusiness(businessId, intake.id), eq(intakes.version, intake.version), eq(intakes.enabled, true)));
    const drafts = [intakeSwitched(toIntakeObject(switched), intakeOwner(intake), "owner")];
    if (await writeSwitch(deps, target, drafts, [update, changedRows(deps, 1)])) {
      return toIntakeObject(switched);
    }
  }
  throw changedMeanwhile();
}

/**
 * What the owner reviews before switching an intake on (docs/intakes.md, The approval summary).
 */
export async function approvalSummary(deps: Dependencies, businessId: string, intakeId: number) {
  const { intake, credentialRevoked } = await runRead(deps.db, businessIntake(businessId, intakeId));
  const questions = intake.fields.map(normalizeField);
  return {
    intake: toIntakeObject(intake),
    version: intake.version,
    approvedVersion: intake.approvedVersion,
    registeredBy: { apiKeyId: intake.apiKeyId, oauthGrantId: intake.oauthGrantId, revoked: credentialRevoked },
    /** Every question, in the order the Secretary asks them. */
    questions,
    contactDetails: contactDetailsOf(questions),
    identityQuestions: identityQuestionsOf(questions),
    /** Null until the intake has been approved once; then what differs from the approved version (empty if nothing). */
    changes: intake.approvedContent
      ? changeList(intake.approvedContent, contentOf(intake), intake.approvedVersion ?? 0)
      : null,
  };
}

export type ApprovalSummary = Awaited<ReturnType<typeof approvalSummary>>;

/**
 * The owner sees every intake of the business, whichever key or app registered it (docs/architecture.md, Principals
 * and owner sides).
 */
export async function listBusinessIntakes(deps: Dependencies, businessId: string) {
  const rows = await deps.db.select().from(intakes).where(eq(intakes.businessId, businessId)).orderBy(asc(intakes.id));
  return rows.map(toIntakeObject);
}
