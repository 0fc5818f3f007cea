import type { Read } from "../../db/reads";
import type { IntakeField } from "../../db/schema";
import type { Dependencies } from "../../dependencies";
import type { IntakeConversation } from "../../durable-objects/intake-conversation";
import { conversationObject, type JurisdictionSwitch } from "../../durable-objects/jurisdictions";
import { ApiError, conflict } from "../../lib/api-error";
import { randomToken } from "../../lib/secrets";
import { unsettle } from "../../lib/settle";
import { idOrNotFound } from "../../lib/validation";
import type { CHAT_CHANNELS } from "../../names-and-limits";
import type { Business } from "../access/businesses";
import type { CredentialSide } from "../access/scope";
import type { ProvenIdentity } from "../intakes/answers";
import { type IntakeRow, intakeNotFound, ownedIntakeRow } from "../intakes/registration";

/*
 * `POST /sandbox/intakes/{id}/conversations` (docs/decisions.md, Sandbox operations): a customer's conversation run
 * through the real IntakeConversation Durable Object, `start` then `answer` as the Secretary runtime calls them
 * (src/runtime/runtime-entrypoint.ts), so the response is stored and `intake.completed` delivered exactly as on a live
 * business, behind the same guards (docs/intakes.md).
 */

export type ConversationRequest = {
  id: string;
  answers: Record<string, string | number | boolean>;
  channel?: (typeof CHAT_CHANNELS)[number];
};

type Conversations = { INTAKE_CONVERSATIONS: DurableObjectNamespace<IntakeConversation> } & JurisdictionSwitch;

/** The intake, when it is this credential's own (another key's is the same 404 as none: docs/intakes.md, Ownership). */
export const sandboxIntake = (side: CredentialSide, id: string): Read<IntakeRow> =>
  ownedIntakeRow(side, idOrNotFound(id, intakeNotFound));

/**
 * The customer's identity as the channel proves it (docs/decisions.md, The intake conversation): a customer on
 * WhatsApp or SMS writes from the number they give, by email from the address they give. The synthetic customer is
 * that one, so a phone or email answer is `verified` on the channel that proves it, as a real customer's would be.
 */
function provenIdentity(fields: IntakeField[], answers: Record<string, string>): ProvenIdentity {
  const first = (type: string) => fields.find((field) => field.type === type && answers[field.id])?.id;
  const phone = first("phone");
  const email = first("email");
  return {
    ...(phone ? { phone: answers[phone] } : {}),
    ...(email ? { email: answers[email] } : {}),
  };
}

/**
 * Runs the conversation: the intake must be switched on by the owner (as for the Secretary), then every answer is
 * checked by the conversation's own rules. An answer refused, or a required question left unanswered, stops the run
 * (nothing is stored or sent) and is the 400 naming that answer. Answers the response as stored and delivered.
 * Round trips: the credential's batch, then those of the conversation's own `start` and completion.
 */
export async function runSandboxIntake(
  env: Conversations,
  { shard, clock }: Pick<Dependencies, "shard" | "clock">,
  business: Business,
  intake: IntakeRow,
  request: ConversationRequest,
) {
  if (!intake.enabled) {
    throw conflict(
      "The intake is switched off: the business owner switches it on in the dashboard, on a sandbox business as on a live one.",
      "invalid_state",
    );
  }
  const answers = Object.fromEntries(Object.entries(request.answers).map(([id, value]) => [id, String(value)]));
  const channel = request.channel ?? "whatsapp";
  const call = { conversationId: randomToken("sandbox_conv_", 12), businessId: business.id, shard };
  const now = clock();
  const conversation = conversationObject(env, call);
  unsettle(
    await conversation.start(
      call,
      {
        intake_id: intake.id,
        channel,
        customer: provenIdentity(intake.fields, answers),
      },
      now,
    ),
  );
  const state = unsettle(await conversation.answer(call, { answers }, now));
  const [rejected] = state.rejected;
  if (rejected || state.status === "started") {
    unsettle(await conversation.decline(call, now));
    if (rejected) {
      throw new ApiError("parameter_invalid", `The answer "answers.${rejected.id}" was refused: ${rejected.reason}`, {
        param: `answers.${rejected.id}`,
      });
    }
    const missing = state.next_question?.id ?? "";
    throw new ApiError("parameter_missing", `The required question "answers.${missing}" has no answer.`, {
      param: `answers.${missing}`,
    });
  }
  if (state.status !== "completed" || state.response_id === null || state.ended_at === null) {
    throw conflict(
      "The intake changed or was switched off while the conversation ran: nothing was sent.",
      "invalid_state",
    );
  }
  return {
    response_id: state.response_id,
    intake: { id: intake.id, name: intake.name, title: state.intake.title },
    conversation: { id: call.conversationId, channel },
    answers: state.answers,
    completed_at: state.ended_at,
  };
}
