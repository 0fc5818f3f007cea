import { and, eq, isNull, lt, sql } from "drizzle-orm";
import { selectedRowsIds } from "../../db/ids";
import { actionCalls, actions, businesses } from "../../db/schema";
import { runStatements, statement } from "../../db/statements";
import type { Dependencies } from "../../dependencies";
import { ApiError } from "../../lib/api-error";
import { iso } from "../../lib/time";
import type { Channel } from "../../names-and-limits";
import type { Action } from "./action-object";
import { type ActionCall, cutOffBefore } from "./call-object";
import { callResult } from "./call-outcome";

/** What the Secretary (or the owner's Test) asks of a call. */
export type CallRequest = {
  conversationId: string;
  messageId: string;
  channel: Channel | "dashboard_test";
  arguments: Record<string, unknown>;
};

/** An action answers within 5 s, 2 calls a customer message (docs/guides/connected-actions.md, The answer rules). */
export const CALLS_PER_MESSAGE = 2;

/**
 * The call's place among its message's 2, taken as a pending row in one statement, when the action (by its business
 * and name) is on, its business is placed here and unmoving, and a place is left: D1 runs one statement at a time,
 * so however many calls of a message race, at most 2 are reserved. Rejected calls sent nothing and do not count, nor
 * do calls cut off mid-way (still pending after 30 s: the service failed, not the customer's message). Rendered once
 * (src/db/statements.ts).
 */
const callReserved = statement<{
  business: string;
  name: string;
  conversation: string;
  message: string;
  channel: string;
  arguments: string;
  createdAt: string;
  cutOff: string;
}>()((db, args) => {
  const callsOfMessage = sql`(select count(*) from ${actionCalls} where ${actionCalls.businessId} = ${args.business} and ${actionCalls.messageId} = ${args.message} and ${actionCalls.status} <> 'rejected' and not (${actionCalls.status} = 'pending' and ${actionCalls.createdAt} < ${args.cutOff}))`;
  return db
    .insert(actionCalls)
    .select(
      db
        .select({
          // Every column, in the table's order (drizzle's rule for an insert from a select); the shard numbers the row.
          id: sql<number>`${selectedRowsIds("action_calls")}`.as("id"),
          actionId: actions.id,
          businessId: actions.businessId,
          conversationId: sql<string>`${args.conversation}`.as("conversation_id"),
          messageId: sql<string>`${args.message}`.as("message_id"),
          channel: sql<string>`${args.channel}`.as("channel"),
          status: sql<"pending">`'pending'`.as("status"),
          arguments: sql<string>`${args.arguments}`.as("arguments"),
          httpStatus: sql<null>`null`.as("http_status"),
          error: sql<null>`null`.as("error"),
          durationMs: sql<null>`null`.as("duration_ms"),
          createdAt: sql<string>`${args.createdAt}`.as("created_at"),
          superseded: sql<number>`0`.as("superseded"),
        })
        .from(actions)
        .innerJoin(businesses, eq(businesses.id, actions.businessId))
        .where(
          and(
            eq(actions.businessId, args.business),
            eq(actions.name, args.name),
            eq(actions.enabled, true),
            isNull(businesses.movingSince),
            lt(callsOfMessage, CALLS_PER_MESSAGE),
          ),
        ),
    )
    .returning();
});

/** A call's reservation (see `callReserved`) for `request`, made at `startedAt`. */
export const reservation = (businessId: string, name: string, request: CallRequest, startedAt: number) =>
  callReserved({
    business: businessId,
    name,
    conversation: request.conversationId,
    message: request.messageId,
    channel: request.channel,
    arguments: JSON.stringify(request.arguments),
    createdAt: iso(startedAt),
    cutOff: cutOffBefore(startedAt),
  });

// Two selects, not a join: a batch's rows come back by column name, and the two tables share names.
const businessById = statement<{ business: string }>()((db, { business }) =>
  db
    .select({ id: businesses.id, handle: businesses.handle, movingSince: businesses.movingSince })
    .from(businesses)
    .where(eq(businesses.id, business)),
);

const actionByName = statement<{ business: string; name: string }>()((db, { business, name }) =>
  db
    .select()
    .from(actions)
    .where(and(eq(actions.businessId, business), eq(actions.name, name))),
);

/**
 * The runtime's first round trip of a call (docs/architecture.md, Performance budget): the business, the action it
 * names and, in the same batch, the call's reservation, unless the call is to be refused whatever (`reservable` false:
 * a channel where actions never run). A reservation whose arguments then fail their checks is undone or recorded as
 * rejected by the caller (calls.ts): only then does a call take a second round trip before its answer.
 */
export async function readAndReserve(
  deps: Dependencies,
  businessId: string,
  name: string,
  request: CallRequest,
  startedAt: number,
  reservable: boolean,
) {
  const reserve = reservable ? [reservation(businessId, name, request, startedAt)] : [];
  const [businessRows, actionRows, reserved = []] = (await runStatements(deps.db, [
    businessById({ business: businessId }),
    actionByName({ business: businessId, name }),
    ...reserve,
  ])) as [
    Array<{ id: string; handle: string; movingSince: string | null }>,
    Array<typeof actions.$inferSelect>,
    ActionCall[]?,
  ];
  return { business: businessRows[0], action: actionRows[0], reserved: reserved[0] };
}

export const callsExhausted = () =>
  new ApiError(
    "action_calls_exhausted",
    `At most ${CALLS_PER_MESSAGE} action calls are made for one customer message.`,
  );

export const callRow = (
  action: Action,
  business: { id: string },
  request: CallRequest,
  startedAt: number,
): Omit<typeof actionCalls.$inferInsert, "status"> => ({
  actionId: action.id,
  businessId: business.id,
  conversationId: request.conversationId,
  messageId: request.messageId,
  channel: request.channel,
  arguments: request.arguments,
  createdAt: iso(startedAt),
});

/** A call whose arguments do not fit: recorded `rejected`, nothing sent (the reservation made for it, if any, becomes it). */
export async function recordRejected(
  deps: Dependencies,
  action: Action,
  business: { id: string },
  request: CallRequest,
  rejection: string,
  startedAt: number,
  reserved?: ActionCall,
) {
  const rejected = {
    status: "rejected" as const,
    error: `The arguments do not fit the parameters: ${rejection}.`,
    durationMs: 0,
  };
  const [call] = reserved
    ? await deps.db.update(actionCalls).set(rejected).where(eq(actionCalls.id, reserved.id)).returning()
    : await deps.db
        .insert(actionCalls)
        .values({ ...callRow(action, business, request, startedAt), ...rejected })
        .returning();
  if (!call) throw new Error("the rejected call was not recorded");
  return callResult(action, call, null);
}
