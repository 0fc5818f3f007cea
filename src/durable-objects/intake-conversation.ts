import { DurableObject } from "cloudflare:workers";
import { dependenciesFromEnv } from "../dependencies-from-env";
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
import { conflict, notFound } from "../lib/api-error";
import { settle } from "../lib/settle";
import { type EpochMs, iso } from "../lib/time";
import { parseOrThrow } from "../lib/validation";
import { IntakeAnswersBody, StartIntakeBody } from "../schemas/runtime";
import { type ConversationBusiness, JURISDICTIONS, jurisdictionOf, objectIn } from "./jurisdictions";

const RUN_KEY = "run";

/**
 * One per Secretary conversation, in its business's jurisdiction (docs/intakes.md, The conversation): the intake
 * running in it, its answers, the alarm that drops it after 24 hours, and its completion, once per run behind the
 * guards of src/domain/intakes/completion-guards.ts. Each method validates its input with the schema of its HTTP
 * mirror under `/internal/v1`, and answers a `RuntimeResult`: a refusal is a value, with the mirror's status.
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

  private async running(business: ConversationBusiness): Promise<IntakeRun> {
    const run = await this.runOf(business);
    if (run?.status === "started") return run;
    throw conflict("No intake is running in this conversation.", "invalid_state");
  }

  /**
   * The conversation's run for this business. A run of another business is none: a conversation is reached through
   * its business's path. When this object has none, the run may be in the object of the same conversation in another
   * jurisdiction, left there by a move of the business across jurisdictions: it is handed over, so that it completes
   * here and none of the customer's answers stays outside the business's region.
   */
  private async runOf(business: ConversationBusiness): Promise<IntakeRun | undefined> {
    const run = await this.run();
    if (run) return run.businessId === business.businessId ? run : undefined;
    const here = jurisdictionOf(business.shard);
    for (const elsewhere of JURISDICTIONS.filter((jurisdiction) => jurisdiction !== here)) {
      const other = objectIn(this.env.INTAKE_CONVERSATIONS, elsewhere, business.conversationId, this.env);
      const handed = await other.handOver(business.businessId);
      if (!handed) continue;
      await this.save(handed.run);
      if (handed.alarm !== null) await this.ctx.storage.setAlarm(handed.alarm);
      return handed.run;
    }
    return undefined;
  }

  /**
   * Gives this conversation's run of `businessId` to the object of its new jurisdiction, and forgets it here with its
   * alarm (see `runOf`).
   */
  async handOver(businessId: string): Promise<{ run: IntakeRun; alarm: number | null } | undefined> {
    const run = await this.run();
    if (run?.businessId !== businessId) return undefined;
    const alarm = await this.ctx.storage.getAlarm();
    await this.ctx.storage.deleteAll();
    return { run, alarm };
  }

  /**
   * What this call's domain work uses (src/dependencies.ts), on the shard the business is in now: its deliveries are
   * enqueued after its answer.
   */
  private dependencies(business: ConversationBusiness) {
    return dependenciesFromEnv(this.env, (work) => this.ctx.waitUntil(work), { shard: business.shard });
  }

  /**
   * Starts an intake: one running intake per conversation at a time. The caller has found the business (the runtime
   * API refuses a sandbox business as an unknown one; a sandbox's test key reaches only its own).
   */
  start(business: ConversationBusiness, input: unknown, now: EpochMs) {
    return settle(async () => {
      const body = parseOrThrow(StartIntakeBody, input, "json");
      const current = await this.run();
      if (current?.status === "started" && !expired(current, now)) {
        throw conflict(`The intake "${current.intakeName}" is already running in this conversation.`, "invalid_state");
      }
      const run = await startRun(
        this.dependencies(business),
        {
          conversationId: business.conversationId,
          businessId: business.businessId,
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
   * Takes answers; completes the intake in the call that leaves every required question with a valid answer
   * (docs/guides/intakes.md, How a conversation runs). A run started 24 hours ago or more is dropped instead, even if
   * its alarm has not run yet: nothing is sent.
   */
  answer(business: ConversationBusiness, input: unknown, now: EpochMs) {
    return settle(async () => {
      const body = parseOrThrow(IntakeAnswersBody, input, "json");
      const waiting = this.completing.current;
      if (waiting) return { ...(await waiting), rejected: [] };
      const last = await this.runOf(business);
      // `endedRun`: a repeated call after completion answers what the completion answered; nothing is stored or sent.
      if (endedRun(last)) {
        return { ...stateOf(last), rejected: [], reply: last.status === "completed" ? thankYou(last) : APOLOGY };
      }
      const run = await this.running(business);
      if (expired(run, now)) {
        const dropped = await this.drop(run, now);
        return { ...stateOf(dropped), rejected: [], reply: EXPIRED };
      }
      const { rejected } = applyAnswers(run, body.answers);
      await this.save(run);
      if (!everyRequiredAnswered(run)) return { ...stateOf(run), rejected, reply: null };
      return { ...(await this.completing.run(() => this.complete(business, run, now))), rejected };
    });
  }

  private async complete(business: ConversationBusiness, run: IntakeRun, now: number) {
    const completedAt = iso(now);
    const completion = await completeRun(this.dependencies(business), {
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

  /** A customer who declines stops the run, and nothing is sent (docs/guides/intakes.md, How a conversation runs). */
  decline(business: ConversationBusiness, now: EpochMs) {
    return settle(async () => {
      const run = await this.running(business);
      const stopped: IntakeRun = { ...run, status: "stopped", endedAt: iso(now) };
      await this.save(stopped);
      await this.ctx.storage.deleteAlarm();
      return stateOf(stopped);
    });
  }

  state(business: ConversationBusiness, now: EpochMs) {
    return settle(async () => {
      const run = await this.runOf(business);
      if (!run) throw notFound("No intake has run in this conversation.");
      // A run past its 24 hours reads as dropped even before its alarm has run.
      return stateOf(run.status === "started" && expired(run, now) ? await this.drop(run, now) : run);
    });
  }

  /** A run left unfinished for 24 hours is dropped, and nothing is sent (docs/intakes.md, The conversation). */
  override async alarm() {
    const run = await this.run();
    if (run?.status === "started") await this.drop(run, Date.now());
  }

  private async drop(run: IntakeRun, now: number): Promise<IntakeRun> {
    const dropped: IntakeRun = { ...run, status: "dropped", endedAt: iso(now) };
    await this.save(dropped);
    await this.ctx.storage.deleteAlarm();
    return dropped;
  }
}
