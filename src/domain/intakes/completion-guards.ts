import { type SQL, sql } from "drizzle-orm";
import { intakeResponses, intakes } from "../../db/schema";
import { guard } from "../../db/snapshot-guard";
import type { Dependencies } from "../../dependencies";
import type { IntakeRun } from "./conversation";

/*
 * A run of an intake completes exactly once (docs/intakes.md, The conversation): one
 * response stored and one `intake.completed` emitted, however often or concurrently its last answer arrives, and
 * nothing at all once the intake changed. Four guards make it so, two in the conversation's Durable Object
 * (src/durable-objects/intake-conversation.ts) and two in D1 (src/domain/intakes/completion.ts). Each is named and
 * its rule stated here, and each side takes its guards from here.
 */
export const COMPLETION_GUARDS = {
  /** DO storage: a run whose stored status says it ended answers what its completion answered; nothing is redone. */
  endedRun: "A completed or no_delivery run answers its stored outcome; nothing is stored or sent again.",
  /** DO memory: the completion under way; a call that arrives meanwhile (its I/O opened the input gate) joins it. */
  waitingCompletion: "While a run completes, another call awaits the same completion instead of starting one.",
  /**
   * D1: `intake_responses.run_id` is unique (index `intake_responses_run`); the batch is guarded by "no response for
   * this run yet", and a completion that finds one answers its id. This holds even when the Durable Object lost its
   * memory, or crashed after D1's write and before it stored the ended run.
   */
  oneResponsePerRun: "At most one response per run id; a completion that finds it answers it, sent.",
  /**
   * D1: the intake is still switched on at the version the run started with, on the read and again, as a guard, in
   * the batch that writes the response: a change between the two aborts the batch, and the next read decides.
   */
  unchangedIntake:
    "The intake is enabled at the run's version when the response is written; otherwise nothing is sent.",
} as const;

export type CompletionGuard = keyof typeof COMPLETION_GUARDS;

/** `endedRun`: the run's stored status marks its completion done (`completed`, or `no_delivery` when nothing was sent). */
export const endedRun = <R extends Pick<IntakeRun, "status">>(
  run: R | undefined,
): run is R & { status: "completed" | "no_delivery" } => run?.status === "completed" || run?.status === "no_delivery";

/** `waitingCompletion`: the one completion under way in a conversation's Durable Object, set and cleared together. */
export class WaitingCompletion<T> {
  #current: Promise<T> | undefined;

  /** The completion under way, to join; undefined when none is. */
  get current(): Promise<T> | undefined {
    return this.#current;
  }

  /** Runs `complete` as the completion under way until it settles. */
  async run(complete: () => Promise<T>): Promise<T> {
    this.#current = complete();
    try {
      return await this.#current;
    } finally {
      this.#current = undefined;
    }
  }
}

/** `oneResponsePerRun`: the response of a run, as a sub-select (its id), inside the batch that would write it. */
export const responseOfRun = (runId: string) =>
  sql<number>`(select ${intakeResponses.id} from ${intakeResponses} where ${intakeResponses.runId} = ${runId})`;

/** `oneResponsePerRun`, in the batch: it aborts if the run has a response already. */
export const noResponseYet = (deps: Dependencies, runId: string) =>
  guard(deps.db, sql`not exists ${responseOfRun(runId)}`);

type RunOfIntake = { intakeId: number; version: number };

/** `unchangedIntake`, on the read: the intake as read is still the one the run started with, switched on. */
export const intakeUnchanged = <I extends { enabled: boolean; version: number }>(
  intake: I | undefined,
  run: RunOfIntake,
): intake is I => intake?.enabled === true && intake.version === run.version;

/** `unchangedIntake`, in the batch: it aborts if the intake was switched off or changed since the read. */
export function intakeStillUnchanged(deps: Dependencies, run: RunOfIntake) {
  const stillOn: SQL = sql`exists (select 1 from ${intakes} where ${intakes.id} = ${run.intakeId} and ${intakes.enabled} = 1 and ${intakes.version} = ${run.version})`;
  return guard(deps.db, stillOn);
}
