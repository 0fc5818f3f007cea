import { z } from "zod";
import { type MovePhase, PLANS } from "../db/schema";
import type { ShardName } from "../db/shards";
import { CHANNELS } from "../names-and-limits";
import { ActionArguments } from "./actions";

/** Inputs of the Secretary runtime API, shared by its HTTP routes and its RPC methods. */
export const BusinessIdParam = z.object({ id: z.uuid({ error: "must be a business id (a UUID)" }) });

export const PlanChange = z.strictObject({ plan: z.enum(PLANS), active: z.boolean() });

/** `POST /internal/v1/businesses/{id}/move` (docs/scaling.md, Moving a business between shards): the shard to go to. */
export const BusinessMove = z.strictObject({ to: z.string().min(1).max(64) });

/**
 * A step's answer of the move: 202 with the phase it reached while steps remain (`copying`, `verifying`, `deleting`,
 * or `undoing` after an abort or when asked for the shard it leaves; a step always gets past `marking`), 200 once
 * `moved` or `undone`.
 */
export type BusinessMoveAnswer = {
  business_id: string;
  from: ShardName;
  to: ShardName;
  status: MovePhase | "moved" | "undone";
  /** Rows copied to the target so far, every table counted. */
  rows_copied: number;
  /** While steps remain: the table the phase has reached. */
  table?: string;
  /** Once moved: each table's rows, counted and compared by checksum in both shards. */
  tables?: Record<string, number>;
  /** While an aborted move is undone: why it stopped. */
  reason?: string;
};

/** `POST /internal/v1/businesses/{id}/actions/{name}/call` (README.md, The Secretary runtime API). */
export const ActionCallParams = BusinessIdParam.extend({ name: z.string().min(1).max(64) });

export const ActionCallBody = z.object({
  conversation_id: z.string().min(1).max(200),
  message_id: z.string().min(1).max(200),
  channel: z.enum(CHANNELS),
  arguments: ActionArguments.default({}),
});

export type ActionCallBody = z.infer<typeof ActionCallBody>;

/** `POST /internal/v1/businesses/{id}/conversations/{cid}/intake`: start an intake in a conversation (docs/intakes.md). */
export const StartIntakeBody = z.object({
  intake_id: z.number().int().positive(),
  channel: z.enum(CHANNELS),
  customer: z.object({ phone: z.string().max(40).optional(), email: z.string().max(254).optional() }).default({}),
});

/** `POST /internal/v1/businesses/{id}/conversations/{cid}/intake/answers`: answers by field id, as written. */
export const IntakeAnswersBody = z.object({
  answers: z.record(z.string().max(40), z.string().max(10_000)),
});

export const ConversationParam = z.object({ cid: z.string().min(1).max(200) });

export type StartIntakeBody = z.infer<typeof StartIntakeBody>;

export const ContextQuery = z.object({ channel: z.enum(CHANNELS) });
