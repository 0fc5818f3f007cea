import { and, desc, eq, lt } from "drizzle-orm";
import { type Read, readTwo } from "../../db/reads";
import { type Answer, intakeResponses, intakes } from "../../db/schema";
import { statement } from "../../db/statements";
import type { Dependencies } from "../../dependencies";
import type { IntakeResponseObject } from "../../schemas/intake-responses";
import { type Side, sideArgument } from "../access/scope";
import { intakeNotFound, type OneIntake, ownedIntake } from "./registration";

/** 50 responses a page (docs/intakes.md, Responses). */
export const RESPONSES_PER_PAGE = 50;

/**
 * One page of an intake's responses, newest first: `RESPONSES_PER_PAGE + 1` rows (the extra one says whether there is a
 * next page) older than `before`. The index `intake_responses_intake (intake_id, id)` serves the filter and the order
 * together, so the page reads only the rows it returns. The intake id the index is searched with is the principal's own
 * intake, found by a scalar subquery on its primary key: for another credential's intake it is NULL, and the page reads
 * no response at all (measured in test/intakes/responses.test.ts).
 */
const responsesPage = statement<OneIntake & { before?: number }>()((db, { side, id, before }) =>
  db
    .select()
    .from(intakeResponses)
    .where(
      and(
        eq(intakeResponses.intakeId, db.select({ id: intakes.id }).from(intakes).where(ownedIntake(side, id))),
        before === undefined ? undefined : lt(intakeResponses.id, before),
      ),
    )
    .orderBy(desc(intakeResponses.id))
    .limit(RESPONSES_PER_PAGE + 1),
);

const intakeIdWithin = statement<OneIntake>()((db, { side, id }) =>
  db.select({ id: intakes.id }).from(intakes).where(ownedIntake(side, id)),
);

/**
 * `GET /intakes/{id}/responses` (docs/intakes.md, Responses): `{ data, next_before }`, newest first, 50 a page;
 * `next_before` is the id of the page's last response when more follow, null on the last page. The ownership check and
 * the page are read together: one round trip.
 */
export function listResponses(
  reach: Side,
  id: number,
  before?: number,
): Read<{ data: IntakeResponseObject[]; next_before: number | null }> {
  const side = sideArgument(reach);
  return readTwo(intakeIdWithin({ side, id }), responsesPage({ side, id, before }), (owned, rows) => {
    if (owned.length === 0) throw intakeNotFound();
    const page = rows.slice(0, RESPONSES_PER_PAGE);
    const last = page.at(-1);
    return {
      data: page.map(toResponseObject),
      next_before: rows.length > RESPONSES_PER_PAGE && last ? last.id : null,
    };
  });
}

/** A response, exactly these members (docs/intakes.md, Responses). */
export function toResponseObject(row: typeof intakeResponses.$inferSelect): IntakeResponseObject {
  return {
    id: row.id,
    conversation: { id: row.conversationId, channel: row.channel },
    answers: row.answers.map(toAnswerObject),
    status: row.status,
    completed_at: row.completedAt,
    created_at: row.createdAt,
  };
}

/** An answer: `proof` only on `email` and `phone` answers (docs/intakes.md, Responses). */
export function toAnswerObject(answer: Answer): IntakeResponseObject["answers"][number] {
  const base = { id: answer.id, label: answer.label, type: answer.type, value: answer.value };
  const provable = answer.type === "email" || answer.type === "phone";
  return provable && answer.proof ? { ...base, proof: answer.proof } : base;
}

/** The owner's view of an intake's latest responses (the 50 newest). */
export async function latestResponses(deps: Dependencies, businessId: string, intakeId: number) {
  const rows = await deps.db
    .select()
    .from(intakeResponses)
    .where(and(eq(intakeResponses.intakeId, intakeId), eq(intakeResponses.businessId, businessId)))
    .orderBy(desc(intakeResponses.id))
    .limit(RESPONSES_PER_PAGE);
  return rows.map(toResponseObject);
}
