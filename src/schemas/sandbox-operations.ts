import { z } from "@hono/zod-openapi";
import { CHAT_CHANNELS, EVENT_NAMES } from "../names-and-limits";
import { ActionArguments, ActionCallObject } from "./actions";
import { EVENT_DATA } from "./events";
import { OneEventName } from "./webhook-operations";

/*
 * The bodies and answers of `/api/v1/sandbox` (src/routes/sandbox.ts; docs/decisions.md, Sandbox operations): what a
 * test key of a sandbox business sends to cause an event, run a customer's intake conversation, or make the
 * Secretary's call of an action.
 */

export const SandboxEventBody = z.object({
  event: OneEventName.openapi({
    description:
      "An event the core platform causes: booking.*, order.*, payment.received, lead.created, review.created",
    example: "booking.created",
  }),
});

export const SandboxEvents = z
  .object({
    events: z
      .array(z.object({ id: z.string().openapi({ example: "evt_3kTfQ9x" }), event: z.enum(EVENT_NAMES) }))
      .openapi({
        description: "Every event emitted, in order: a change of a booking made for it follows its booking.created",
      }),
  })
  .openapi("SandboxEvents");

export const SandboxConversationBody = z.object({
  answers: z.record(z.string().max(40), z.union([z.string().max(10_000), z.number(), z.boolean()])).openapi({
    description: "The customer's answers by question id, as a customer would write them",
    example: { full_name: "Noor Haddad", email: "noor@example.com" },
  }),
  channel: z
    .enum(CHAT_CHANNELS)
    .optional()
    .openapi({ description: "The chat channel the conversation runs on; whatsapp when left out" }),
});

/** The response as stored and delivered in `intake.completed`. */
export const SandboxConversation = EVENT_DATA["intake.completed"].openapi("SandboxConversation");

export const SandboxActionCallBody = z.object({
  arguments: ActionArguments.default({}).openapi({
    type: "object",
    // Any member: the call checks each against the action's parameters, and a value that does not fit is a rejected
    // call, as in a conversation (docs/guides/sandbox.md).
    additionalProperties: true,
    description: "The arguments, as the Secretary would send them",
  }),
  message: z.string().min(1).max(200).optional().openapi({
    description:
      "The id of the customer message the call belongs to: at most 2 calls per message, as for the Secretary; a new one when left out",
  }),
});

export const SandboxActionCall = z
  .object({
    call: ActionCallObject,
    result: z.object({ content: z.string(), boundary: z.string(), text: z.string() }).nullable().openapi({
      description: "The action's answer as the Secretary gets it, fenced as information; null without one",
    }),
    truncated: z.boolean().openapi({ description: "Whether the answer was cut to what the Secretary reads" }),
  })
  .openapi("SandboxActionCall");
