import { and, eq } from "drizzle-orm";
import { isGuardAbort } from "../../db/d1-failures";
import { type Answer, businesses, intakeResponses, intakes } from "../../db/schema";
import type { Dependencies } from "../../dependencies";
import { endpointsOf } from "../webhooks/endpoints";
import { withDataFromSql } from "../webhooks/event-draft";
import { writeEvents } from "../webhooks/outbox/write";
import { intakeStillUnchanged, intakeUnchanged, noResponseYet, responseOfRun } from "./completion-guards";

/** One finished run of an intake in a conversation, as the conversation's Durable Object holds it. */
export type CompletedRun = {
  runId: string;
  businessId: string;
  intakeId: number;
  version: number;
  conversation: { id: string; channel: string };
  answers: Answer[];
  completedAt: string;
};

export type Completion = { sent: true; responseId: number } | { sent: false; reason: "intake_changed" };

/** Two attempts suffice: a guard only aborts when the intake changed or the run completed meanwhile. */
const COMPLETION_ATTEMPTS = 3;

/**
 * Completes a run only if the intake is still on and unchanged since the run started, else nothing is sent
 * (docs/guides/intakes.md, How a conversation runs): the response and its `intake.completed` in ONE D1 batch, behind
 * the guards `unchangedIntake` and `oneResponsePerRun` (completion-guards.ts), so a repeated or concurrent completion
 * stores one response, emits one event and answers the same. `response_id` is the row inserted earlier in the batch.
 */
export async function completeRun(deps: Dependencies, run: CompletedRun): Promise<Completion> {
  const { db } = deps;
  for (let attempt = 1; ; attempt++) {
    const [intake, existing, business, endpoints] = await db.batch([
      db
        .select()
        .from(intakes)
        .where(and(eq(intakes.id, run.intakeId), eq(intakes.businessId, run.businessId))),
      db.select({ id: intakeResponses.id }).from(intakeResponses).where(eq(intakeResponses.runId, run.runId)),
      db.select().from(businesses).where(eq(businesses.id, run.businessId)),
      endpointsOf(db, run.businessId),
    ]);
    // oneResponsePerRun: this run completed already.
    if (existing[0]) return { sent: true, responseId: existing[0].id };
    const current = intake[0];
    if (!intakeUnchanged(current, run) || !business[0]) return { sent: false, reason: "intake_changed" };
    const completed = withDataFromSql({
      event: "intake.completed",
      data: {
        intake: { id: current.id, name: current.name, title: current.title },
        response_id: null,
        conversation: run.conversation,
        answers: run.answers,
        completed_at: run.completedAt,
      },
      audience: { principal: { apiKeyId: current.apiKeyId, oauthGrantId: current.oauthGrantId } },
      dataFromSql: { response_id: responseOfRun(run.runId) },
    });
    try {
      const written = await writeEvents(
        deps,
        business[0],
        endpoints,
        [completed],
        [
          intakeStillUnchanged(deps, run),
          noResponseYet(deps, run.runId),
          db.insert(intakeResponses).values({
            intakeId: current.id,
            businessId: run.businessId,
            conversationId: run.conversation.id,
            channel: run.conversation.channel,
            runId: run.runId,
            answers: run.answers,
            status: "completed",
            completedAt: run.completedAt,
            createdAt: run.completedAt,
          }),
        ],
      );
      deps.enqueue(written.deliveryIds);
      // Stored: the next read answers with the response's id.
    } catch (error) {
      // The intake changed, or this run completed, between the read and the write: read again and decide.
      if (!isGuardAbort(error) || attempt === COMPLETION_ATTEMPTS) throw error;
    }
  }
}
