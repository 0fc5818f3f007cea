import { and, eq } from "drizzle-orm";
import { type Answer, businesses, type IntakeContent, type IntakeField, intakes } from "../../db/schema";
import type { Dependencies } from "../../dependencies";
import { ApiError, conflict, notFound } from "../../lib/api-error";
import { randomToken } from "../../lib/secrets";
import { iso } from "../../lib/time";
import type { Channel } from "../../names-and-limits";
import { intakesRunOn } from "../secretary/channels";
import { checkAnswer, type ProvenIdentity, proofOf } from "./answers";

/**
 * A run's states; `no_delivery`: the intake was switched off or changed since the start (docs/intakes.md, The
 * conversation).
 */
export type RunStatus = "started" | "completed" | "stopped" | "dropped" | "no_delivery";

/** A run left unfinished for 24 hours is dropped (docs/guides/intakes.md, How a conversation runs). */
export const UNFINISHED_AFTER_MS = 24 * 3_600_000;

/** What a conversation's Durable Object keeps of its current (or last) intake run. */
export type IntakeRun = {
  runId: string;
  status: RunStatus;
  conversationId: string;
  channel: Channel;
  customer: ProvenIdentity;
  businessId: string;
  businessName: string;
  intakeId: number;
  intakeName: string;
  version: number;
  snapshot: IntakeContent;
  /** Accepted answers by field id, normalised. */
  answers: Record<string, string>;
  /** Optional questions the customer chose not to answer. */
  skipped: string[];
  startedAt: string;
  endedAt: string | null;
  responseId: number | null;
};

/** A question as the Secretary asks it. */
export const questionOf = (field: IntakeField) => ({
  id: field.id,
  label: field.label,
  type: field.type,
  required: field.required,
  ...(field.options ? { options: field.options } : {}),
  ...(field.help ? { help: field.help } : {}),
});

/**
 * The next question, one at a time in the order of `fields` (the order the owner approved), skipping those answered
 * or skipped (docs/intakes.md, The conversation). Undefined when nothing is left to ask.
 */
export function nextQuestion(run: IntakeRun) {
  const next = run.snapshot.fields.find(
    (field) => run.answers[field.id] === undefined && !run.skipped.includes(field.id),
  );
  return next ? questionOf(next) : undefined;
}

/**
 * The run completes in the answers call that leaves every required question answered, keeping the optional answers
 * sent in that call: a customer who stops after the last required one has sent their answers (docs/intakes.md, The
 * conversation).
 */
export const everyRequiredAnswered = (run: IntakeRun) =>
  run.snapshot.fields.every((field) => !field.required || run.answers[field.id] !== undefined);

/** A run 24 hours old is dropped, even when the alarm that drops it runs late (docs/intakes.md, The conversation). */
export const expired = (run: IntakeRun, now: number) => now - Date.parse(run.startedAt) >= UNFINISHED_AFTER_MS;

/**
 * Starts a run (docs/guides/intakes.md, How a conversation runs): only on the chat channels, only an enabled intake
 * of that business. Records the version and a snapshot of the questions, and answers the opening line.
 */
export async function startRun(
  deps: Dependencies,
  input: { conversationId: string; businessId: string; intakeId: number; channel: Channel; customer: ProvenIdentity },
  now: number,
): Promise<IntakeRun> {
  if (!intakesRunOn(input.channel)) {
    throw new ApiError(
      "invalid_state",
      "Intakes run only on chat channels: not on phone calls nor through connected AI assistants (MCP).",
    );
  }
  const row = await deps.db
    .select({ intake: intakes, businessName: businesses.name })
    .from(intakes)
    .innerJoin(businesses, eq(businesses.id, intakes.businessId))
    .where(and(eq(intakes.id, input.intakeId), eq(intakes.businessId, input.businessId)))
    .get();
  if (!row) throw notFound("The business has no intake with that id.");
  if (!row.intake.enabled)
    throw conflict("The intake is switched off: only the owner can switch it on.", "invalid_state");
  const { intake } = row;
  return {
    runId: randomToken("run_", 16),
    status: "started",
    conversationId: input.conversationId,
    channel: input.channel,
    customer: input.customer,
    businessId: input.businessId,
    businessName: row.businessName,
    intakeId: intake.id,
    intakeName: intake.name,
    version: intake.version,
    snapshot: { title: intake.title, description: intake.description, fields: intake.fields },
    answers: {},
    skipped: [],
    startedAt: iso(now),
    endedAt: null,
    responseId: null,
  };
}

/** Past this length the questions themselves make too long a line: the opening names their topics instead. */
const OPENING_QUESTIONS_CHARS = 240;

/** "a", "a and b", "a, b and c". */
const listed = (items: string[]) =>
  items.length <= 1 ? (items[0] ?? "") : `${items.slice(0, -1).join(", ")} and ${items.at(-1)}`;

/**
 * The opening line says what will be asked and who receives the answers (docs/intakes.md, The conversation): the
 * questions' labels, or their topics when long (a question's id in words: `moving_date` → "moving date"), and the
 * business by name. The owner-facing title is not shown.
 */
export function openingLine(run: IntakeRun): string {
  const { fields } = run.snapshot;
  const questions = listed(fields.map((field) => `"${field.label}"`));
  const asks =
    questions.length <= OPENING_QUESTIONS_CHARS
      ? `I'd like to ask you ${fields.length === 1 ? "one question" : `${fields.length} questions`}: ${questions}.`
      : `I'd like to ask you about ${listed(fields.map((field) => field.id.replaceAll("_", " ")))}.`;
  return `${asks} Your answers go to ${run.businessName}.`;
}

export type AnswerRejection = { id: string; reason: string };

/**
 * Each answer is checked by its question's type, and earlier answers are kept unless the customer changes them
 * (docs/guides/intakes.md, How a conversation runs). An empty answer to an optional question skips it. Answers to
 * questions the intake does not have are rejected with a reason.
 */
export function applyAnswers(run: IntakeRun, answers: Record<string, string>) {
  const rejected: AnswerRejection[] = [];
  const accepted: string[] = [];
  for (const [id, raw] of Object.entries(answers)) {
    const field = run.snapshot.fields.find((candidate) => candidate.id === id);
    if (!field) {
      rejected.push({ id, reason: "The intake has no question with this id." });
      continue;
    }
    if (!field.required && raw.trim() === "") {
      delete run.answers[id];
      if (!run.skipped.includes(id)) run.skipped.push(id);
      continue;
    }
    const checked = checkAnswer(field, raw);
    if (!checked.ok) {
      rejected.push({ id, reason: checked.reason });
      continue;
    }
    run.answers[id] = checked.value;
    run.skipped = run.skipped.filter((skipped) => skipped !== id);
    accepted.push(id);
  }
  return { accepted, rejected };
}

/**
 * The stored and delivered answers, in the order of the questions, `proof` on email and phone (docs/guides/intakes.md,
 * Proof).
 */
export function answersOf(run: IntakeRun): Answer[] {
  return run.snapshot.fields
    .filter((field) => run.answers[field.id] !== undefined)
    .map((field) => {
      const value = run.answers[field.id] ?? "";
      const proof = proofOf(field, value, run.channel, run.customer);
      return { id: field.id, label: field.label, type: field.type, value, ...(proof ? { proof } : {}) };
    });
}

/** The state the runtime reads (`GET /internal/v1/conversations/{cid}/intake`). */
export function stateOf(run: IntakeRun) {
  return {
    status: run.status,
    intake: { id: run.intakeId, name: run.intakeName, title: run.snapshot.title, version: run.version },
    channel: run.channel,
    answers: answersOf(run),
    skipped: run.skipped,
    next_question: run.status === "started" ? (nextQuestion(run) ?? null) : null,
    started_at: run.startedAt,
    ended_at: run.endedAt,
    response_id: run.responseId,
  };
}

export const thankYou = (run: IntakeRun) => `Thank you! Your answers have been sent to ${run.businessName}.`;
export const APOLOGY =
  "Sorry: this form changed or was switched off while we were talking, so your answers were not sent. Please ask again and we will start over.";
export const EXPIRED =
  "Sorry: this form was left unfinished for a day, so it was closed and your answers were not sent. Please ask again and we will start over.";
