import { DurableObject } from "cloudflare:workers";
import { database } from "../db/client";
import { LEGACY_SHARD, type ShardName } from "../db/shards";
import { dependenciesFromEnv } from "../dependencies-from-env";
import { shardOfBusiness } from "../domain/access/directory";
import { completeRun } from "../domain/intakes/completion";
import { endedRun, WaitingCompletion } from "../domain/intakes/completion-guards";
import {
  APOLOGY,
  answersOf,
  applyAnswers,
  EXPIRED,
  everyRequiredAnswered,
  expired,
  type IntakeRun,
  openingLine,
  startRun,
  stateOf,
  thankYou,
  UNFINISHED_AFTER_MS,
} from "../domain/intakes/conversation";
import { conflict, notFound } from "../lib/errors";
import { settle } from "../lib/settle";
import { parseOrThrow } from "../lib/validation";
import { IntakeAnswersBody, StartIntakeBody } from "../schemas/runtime";

const RUN_KEY = "run";

/**
 * One per Secretary conversation (`idFromName(conversationId)`; docs/architecture.md, Shape): the intake running in
 * it, its answers, the alarm that drops it after 24 hours, and its exactly-once completion. Every method validates
 * its input with the same zod schema as its HTTP mirror under `/internal/v1/conversations/{cid}/intake`, and answers
 * a `RuntimeResult` (a refusal is a value, with the status the HTTP mirror answers).
 *
 * Completion happens once per run, behind the guards named in src/domain/intakes/completion-guards.ts: here the
 * ended run (`endedRun`) and the completion under way (`waitingCompletion`); in D1, one response per run and the
 * intake's version (src/domain/intakes/completion.ts).
 */
export class IntakeConversation extends DurableObject {
  /** `waitingCompletion`: a call that arrives while the run completes joins that completion. */
  private readonly completing = new WaitingCompletion<ReturnType<typeof stateOf> & { reply: string }>();

  private run(): Promise<IntakeRun | undefined> {
    return this.ctx.storage.get<IntakeRun>(RUN_KEY);
  }

  private async save(run: IntakeRun) {
    await this.ctx.storage.put(RUN_KEY, run);
  }

  private async running(): Promise<IntakeRun> {
    const run = await this.run();
    if (run?.status === "started") return run;
    throw conflict("No intake is running in this conversation.", "invalid_state");
  }

  /**
   * What this call's domain work uses (src/dependencies.ts), on the shard of the run's business: its deliveries are
   * enqueued after its answer.
   */
  private dependencies(shard: ShardName) {
    return dependenciesFromEnv(this.env, (work) => this.ctx.waitUntil(work), { shard });
  }

  /**
   * Starts an intake for the Secretary runtime: one running intake per conversation at a time. A sandbox business is
   * no business of the runtime's, answered as an unknown one (docs/decisions.md, Sandbox businesses).
   */
  start(conversationId: string, input: unknown, now = Date.now()) {
    return this.begin(conversationId, input, now, "runtime");
  }

  /** The same for a sandbox business's test key (`POST /api/v1/sandbox/intakes/{id}/conversations`), and only it. */
  startInSandbox(conversationId: string, input: unknown) {
    return this.begin(conversationId, input, Date.now(), "sandbox");
  }

  private begin(conversationId: string, input: unknown, now: number, caller: "runtime" | "sandbox") {
    return settle(async () => {
      const body = parseOrThrow(StartIntakeBody, input, "json");
      const current = await this.run();
      if (current?.status === "started" && !expired(current, now)) {
        throw conflict(`The intake "${current.intakeName}" is already running in this conversation.`, "invalid_state");
      }
      // The business is known from here on: its shard is looked up once and kept in the run (src/db/shards.ts).
      const { shard, sandbox } = await shardOfBusiness(database(this.env.DB), body.business_id);
      if (sandbox !== (caller === "sandbox")) throw notFound("No business has that id.");
      const run = await startRun(
        this.dependencies(shard),
        {
          conversationId,
          businessId: body.business_id,
          intakeId: body.intake_id,
          channel: body.channel,
          customer: body.customer,
        },
        now,
      );
      await this.save(run);
      await this.ctx.storage.setAlarm(now + UNFINISHED_AFTER_MS);
      return { ...stateOf(run), reply: openingLine(run) };
    });
  }

  /**
   * Takes answers; completes the intake in the call that leaves every required question with a valid answer (spec,
   * How an intake conversation runs, 4). A run started 24 hours ago or more is dropped instead, even if its alarm has
   * not run yet: nothing is sent.
   */
  answer(input: unknown, now = Date.now()) {
    return settle(async () => {
      const body = parseOrThrow(IntakeAnswersBody, input, "json");
      const waiting = this.completing.current;
      if (waiting) return { ...(await waiting), rejected: [] };
      const last = await this.run();
      // `endedRun`: a repeated call after completion answers what the completion answered; nothing is stored or sent.
      if (endedRun(last)) {
        return { ...stateOf(last), rejected: [], reply: last.status === "completed" ? thankYou(last) : APOLOGY };
      }
      const run = await this.running();
      if (expired(run, now)) {
        const dropped = await this.drop(run, now);
        return { ...stateOf(dropped), rejected: [], reply: EXPIRED };
      }
      const { rejected } = applyAnswers(run, body.answers);
      await this.save(run);
      if (!everyRequiredAnswered(run)) return { ...stateOf(run), rejected, reply: null };
      return { ...(await this.completing.run(() => this.complete(run, now))), rejected };
    });
  }

  private async complete(run: IntakeRun, now: number) {
    const completedAt = new Date(now).toISOString();
    // A run stored before sharding names no shard: its business is in the legacy one.
    const completion = await completeRun(this.dependencies(run.shard ?? LEGACY_SHARD), {
      runId: run.runId,
      businessId: run.businessId,
      intakeId: run.intakeId,
      version: run.version,
      conversation: { id: run.conversationId, channel: run.channel },
      answers: answersOf(run),
      completedAt,
    });
    const ended: IntakeRun = {
      ...run,
      status: completion.sent ? "completed" : "no_delivery",
      endedAt: completedAt,
      responseId: completion.sent ? completion.responseId : null,
    };
    await this.save(ended);
    await this.ctx.storage.deleteAlarm();
    return { ...stateOf(ended), reply: completion.sent ? thankYou(ended) : APOLOGY };
  }

  /** Spec: "A customer who says they do not want to go on stops it, and nothing is sent." */
  decline(now = Date.now()) {
    return settle(async () => {
      const run = await this.running();
      const stopped: IntakeRun = { ...run, status: "stopped", endedAt: new Date(now).toISOString() };
      await this.save(stopped);
      await this.ctx.storage.deleteAlarm();
      return stateOf(stopped);
    });
  }

  state(now = Date.now()) {
    return settle(async () => {
      const run = await this.run();
      if (!run) throw notFound("No intake has run in this conversation.");
      // A run past its 24 hours reads as dropped even before its alarm has run.
      return stateOf(run.status === "started" && expired(run, now) ? await this.drop(run, now) : run);
    });
  }

  /** Spec: "An intake left unfinished for 24 hours is dropped." Nothing is sent. */
  override async alarm() {
    const run = await this.run();
    if (run?.status === "started") await this.drop(run, Date.now());
  }

  private async drop(run: IntakeRun, now: number): Promise<IntakeRun> {
    const dropped: IntakeRun = { ...run, status: "dropped", endedAt: new Date(now).toISOString() };
    await this.save(dropped);
    await this.ctx.storage.deleteAlarm();
    return dropped;
  }
}

/** The conversation's own object, `idFromName(conversationId)` (docs/architecture.md, Shape). */
export const conversationObject = (
  env: { INTAKE_CONVERSATIONS: DurableObjectNamespace<IntakeConversation> },
  conversationId: string,
) => env.INTAKE_CONVERSATIONS.get(env.INTAKE_CONVERSATIONS.idFromName(conversationId));
