import { insertMany, runBatch } from "../../src/db/batches";
import { type Answer, intakeResponses } from "../../src/db/schema";
import { db } from "./fixtures";
import { call, json, RUNTIME } from "./http";

export type IntakeFieldBody = {
  id: string;
  label: string;
  type: string;
  required: boolean;
  options?: string[];
  help?: string;
};

export type Intake = {
  id: number;
  name: string;
  title: string;
  description: string;
  fields: IntakeFieldBody[];
  enabled: boolean;
  createdAt: string;
  updatedAt: string;
};

export const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

let counter = 0;

/** A valid intake body with a fresh name; `overrides` replace top-level members. */
export function intakeBody(overrides: Record<string, unknown> = {}) {
  return {
    name: `quote_${counter++}`,
    title: "Quote request",
    description: "When a customer asks for a renovation quote. Not for repairs or existing orders.",
    fields: [
      { id: "full_name", label: "What is your name?", type: "text", required: true },
      { id: "email", label: "Which email address should we reply to?", type: "email", required: true },
      { id: "budget", label: "What is your budget?", type: "select", options: ["Under 5k", "5k to 20k", "Over 20k"] },
    ],
    ...overrides,
  };
}

export const postIntake = (key: string | undefined, body: unknown) =>
  call("/api/v1/intakes", { key, method: "POST", body });

export const patchIntake = (key: string | undefined, id: number | string, body: unknown) =>
  call(`/api/v1/intakes/${id}`, { key, method: "PATCH", body });

export const getIntake = (key: string | undefined, id: number | string) => call(`/api/v1/intakes/${id}`, { key });

export const deleteIntake = (key: string | undefined, id: number | string) =>
  call(`/api/v1/intakes/${id}`, { key, method: "DELETE" });

export const getResponses = (key: string | undefined, id: number | string, query = "") =>
  call(`/api/v1/intakes/${id}/responses${query}`, { key });

/** Registers an intake and answers it (the test fails loudly if the service refuses). */
export async function createIntake(key: string, overrides: Record<string, unknown> = {}) {
  const response = await postIntake(key, intakeBody(overrides));
  if (response.status !== 201) throw new Error(`create failed: ${response.status} ${await response.text()}`);
  return json<Intake>(response);
}

let run = 0;

/**
 * Stores `count` completed responses of an intake directly, without running a conversation for each,
 * oldest first, in one batch. Each has a name, an email answer and a phone answer.
 */
export async function insertResponses(
  intake: { id: number },
  businessId: string,
  count: number,
  answers: (i: number) => Answer[] = defaultAnswers,
) {
  const rows = Array.from({ length: count }, (_, i) => {
    const at = new Date(Date.UTC(2026, 10, 1, 9, 0, i)).toISOString();
    return {
      intakeId: intake.id,
      businessId,
      conversationId: `conv_${intake.id}_${i}`,
      channel: i % 2 ? "whatsapp" : "chat_page",
      runId: `run_${run++}_${crypto.randomUUID()}`,
      answers: answers(i),
      status: "completed" as const,
      completedAt: at,
      createdAt: at,
    };
  });
  await runBatch(db, insertMany(db, intakeResponses, rows));
}

function defaultAnswers(i: number): Answer[] {
  return [
    { id: "full_name", label: "What is your name?", type: "text", value: `Customer ${i}` },
    {
      id: "email",
      label: "Which email address should we reply to?",
      type: "email",
      value: `c${i}@example.com`,
      proof: "stated",
    },
  ];
}

/** The runtime API's intake of a conversation of a business (README.md, The Secretary runtime API). */
export const conversationPath = (businessId: string, cid: string) =>
  `/internal/v1/businesses/${businessId}/conversations/${cid}/intake`;

/**
 * The runtime's calls of a conversation's intake, as the Secretary makes them: each names the business the
 * conversation is with, `business` (the start's `business_id` in these tests' bodies, sent in the path).
 */
export const runtimeIntake = (business: { id: string }) => ({
  start: (cid: string, body: Record<string, unknown>) =>
    call(conversationPath(business.id, cid), { method: "POST", headers: RUNTIME, body }),
  answer: (cid: string, answers: unknown) =>
    call(`${conversationPath(business.id, cid)}/answers`, { method: "POST", headers: RUNTIME, body: { answers } }),
  decline: (cid: string) => call(`${conversationPath(business.id, cid)}/decline`, { method: "POST", headers: RUNTIME }),
  state: (cid: string) => call(conversationPath(business.id, cid), { headers: RUNTIME }),
});
