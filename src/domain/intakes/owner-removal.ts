import { count, eq } from "drizzle-orm";
import { readTwo, runRead } from "../../db/reads";
import { intakeResponses, intakes } from "../../db/schema";
import { statement } from "../../db/statements";
import type { Dependencies } from "../../dependencies";
import { businessIntakeWithin, ofBusiness } from "./owner-decisions";
import { deleteIntakeWhere, intakeNotFound } from "./registration";

/*
 * The owner removes an intake of the business, whoever registered it (docs/decisions.md, The owner's dashboard): also
 * one of a revoked key or a disconnected app, which no partner can reach any more and which still counts towards the
 * business's 5 intakes. Scoped by the business alone, never by a partner principal.
 */

/** The intake's responses, counted through the index on `intake_id`; none for another business's id. */
const responsesWithin = statement<{ business: string; id: number }>()((db, { business, id }) =>
  db
    .select({ count: count() })
    .from(intakeResponses)
    .where(eq(intakeResponses.intakeId, db.select({ id: intakes.id }).from(intakes).where(ofBusiness(business, id)))),
);

/** What the confirmation names: the intake, how many responses go with it, and whether its key or app lost access. */
export async function intakeRemoval(deps: Dependencies, businessId: string, intakeId: number) {
  const args = { business: businessId, id: intakeId };
  return runRead(
    deps.db,
    readTwo(businessIntakeWithin(args), responsesWithin(args), ([found], [counted]) => {
      if (!found) throw intakeNotFound();
      const { id, name, title, enabled } = found.intake;
      return { id, name, title, enabled, revoked: Boolean(found.revoked), responses: Number(counted?.count ?? 0) };
    }),
  );
}

/**
 * Deletes the business's intake and its responses in one statement (the partner's DELETE, scoped by the business
 * instead of the key or app), which frees its place among the 5 and its name. Another business's id is the 404.
 */
export const removeIntake = (deps: Dependencies, businessId: string, intakeId: number) =>
  deleteIntakeWhere(deps, ofBusiness(businessId, intakeId));
