import { and, eq, not, sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import { apiKeys, intakes, oauthGrants } from "../../db/schema";
import { conflict, forbidden } from "../../lib/errors";
import { isoNow } from "../../lib/time";
import { changeList } from "./change-list";
import { contactDetailsOf, identityQuestionsOf } from "./question-detection";
import { contentOf, intakeNotFound, normalizeField, toIntakeObject } from "./registration";

/*
 * The owner's side of an intake (spec: States, Intake `enabled`; Contact details and approval). Only the owner
 * switches an intake on or off; these functions are for the dashboard and are scoped by the business alone, never
 * by a partner principal. The rules for contact details and identity questions are in docs/intakes.md.
 */

/**
 * Whether the key or app that registered the intake has been revoked or disconnected (spec: Intake `enabled`, "Key
 * revoked, or owner disconnects the app → false"). Written as SQL so that it can guard the switch-on in the same
 * statement as the write: a revocation that lands first always wins.
 */
export const registeredByRevokedCredential = sql<boolean>`(exists (select 1 from ${apiKeys} where ${apiKeys.id} = ${intakes.apiKeyId} and ${apiKeys.revokedAt} is not null) or exists (select 1 from ${oauthGrants} where ${oauthGrants.id} = ${intakes.oauthGrantId} and ${oauthGrants.revokedAt} is not null))`;

const ofBusiness = (businessId: string, id: number) => and(eq(intakes.id, id), eq(intakes.businessId, businessId));

async function findBusinessIntake(db: Database, businessId: string, id: number) {
  const found = await db
    .select({ intake: intakes, revoked: sql<number>`${registeredByRevokedCredential}` })
    .from(intakes)
    .where(ofBusiness(businessId, id))
    .get();
  if (!found) throw intakeNotFound();
  return { intake: found.intake, credentialRevoked: Boolean(found.revoked) };
}

const revokedCredential = () =>
  forbidden(
    "The key or app that registered this intake has been revoked or disconnected, so the intake cannot be switched on.",
  );

const changedSinceReview = () =>
  conflict("The intake has changed since it was reviewed: review it again before switching it on.");

/**
 * The owner switches the intake on (spec: Intake `enabled`, false → true, after seeing every question and the
 * contact details). Records the approved version and its content, which later PATCHes are compared against.
 * `version`, when given, is the version the owner reviewed: a different current version is a 409, so an owner never
 * approves questions they have not seen. The write is guarded by the version it read and by the credential not being
 * revoked, in one statement, so neither a concurrent PATCH nor a concurrent revocation can be overtaken.
 */
export async function switchIntakeOn(
  db: Database,
  businessId: string,
  intakeId: number,
  options: { version?: number } = {},
) {
  const { intake, credentialRevoked } = await findBusinessIntake(db, businessId, intakeId);
  if (credentialRevoked) throw revokedCredential();
  if (options.version !== undefined && options.version !== intake.version) throw changedSinceReview();
  const [updated] = await db
    .update(intakes)
    .set({
      enabled: true,
      approvedVersion: intake.version,
      approvedContent: contentOf(intake),
      updatedAt: intake.enabled ? intake.updatedAt : isoNow(),
    })
    .where(
      and(ofBusiness(businessId, intake.id), eq(intakes.version, intake.version), not(registeredByRevokedCredential)),
    )
    .returning();
  if (updated) return toIntakeObject(updated);
  // Something got in between the read and the write: say what.
  const now = await findBusinessIntake(db, businessId, intake.id);
  if (now.credentialRevoked) throw revokedCredential();
  throw changedSinceReview();
}

/** The owner switches the intake off (spec: Intake `enabled`, true → false). An intake that is off stays as it is. */
export async function switchIntakeOff(db: Database, businessId: string, intakeId: number) {
  const { intake } = await findBusinessIntake(db, businessId, intakeId);
  if (!intake.enabled) return toIntakeObject(intake);
  const [updated] = await db
    .update(intakes)
    .set({ enabled: false, updatedAt: isoNow() })
    .where(and(ofBusiness(businessId, intake.id), eq(intakes.enabled, true)))
    .returning();
  return toIntakeObject(updated ?? (await findBusinessIntake(db, businessId, intake.id)).intake);
}

/** What the owner reviews before switching an intake on (spec: Contact details and approval; DESIGN.md, dashboard). */
export async function approvalSummary(db: Database, businessId: string, intakeId: number) {
  const { intake, credentialRevoked } = await findBusinessIntake(db, businessId, intakeId);
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
