import { nothingMore, type Read } from "../../db/reads";
import type { Dependencies } from "../../dependencies";
import type { IntakeConversation } from "../../durable-objects/intake-conversation";
import type { JurisdictionSwitch } from "../../durable-objects/jurisdictions";
import { forbidden } from "../../lib/api-error";
import type { EventName } from "../../names-and-limits";
import type { PartnerOperation } from "../access/partner-operation";
import type { Principal } from "../access/principals";
import type { CredentialSide } from "../access/scope";
import { type Budget, takeHourly } from "../webhooks/endpoint-budgets";
import { callSandboxAction, sandboxAction } from "./action-calls";
import { SANDBOX_ACTION_CALLS, SANDBOX_EVENTS } from "./budgets";
import { emitSandboxEvent, sandboxEventRead } from "./events";
import { type ConversationRequest, runSandboxIntake, sandboxIntake } from "./intake-runs";

/*
 * What a test key can do under /api/v1/sandbox (src/routes/sandbox.ts; docs/decisions.md, Sandbox operations):
 * cause, on its own sandbox business, what the core platform, a customer or the Secretary would cause on a live one.
 */

/**
 * The one rule of every sandbox operation: the credential is a test key of a sandbox business (docs/guides/sandbox.md).
 * A live key, or an OAuth app connected to a sandbox business, may not make up bookings, customers or the
 * Secretary's calls: only a developer's own test key may (docs/decisions.md, Sandbox operations).
 */
export function assertSandboxKey(principal: Principal): void {
  if (principal.kind === "api_key" && principal.business.sandbox) return;
  throw forbidden(
    "The sandbox operations need a test key (sk_test_…) of a sandbox business: create one with POST /api/sandbox/businesses.",
    "forbidden",
  );
}

type Operation<Input, Loaded, Output> = {
  read?: (side: CredentialSide, input: Input) => Read<Loaded>;
  write: (deps: Dependencies, principal: Principal, input: Input, loaded: Loaded) => Promise<Output>;
};

/**
 * A sandbox operation: `assertSandboxKey` once the credential is admitted (after the plan, as every refusal of a
 * partner credential: src/admission/partner-admission.ts), and before anything the request itself may be refused for. The
 * read still goes in the credential's batch (one round trip), but its answer (a 404, say), and a path id that names
 * nothing, wait until the rule has passed, so that a live key learns only that it may not. Then the sandbox's hourly
 * `budget` (src/domain/sandbox/budgets.ts): after the 404 and 409, so that a mistyped id spends nothing.
 */
export function sandboxOnly<Input, Loaded, Output>(
  budget: Budget,
  operation: Operation<Input, Loaded, Output>,
): PartnerOperation<Input, () => Loaded, Output> {
  return {
    read: (side, input) => {
      try {
        const { statements, answer } = operation.read?.(side, input) ?? (nothingMore as Read<Loaded>);
        return { statements, answer: (results) => () => answer(results) };
      } catch (error) {
        return {
          statements: [],
          answer: () => () => {
            throw error;
          },
        };
      }
    },
    write: async (deps, principal, input, loaded) => {
      assertSandboxKey(principal);
      const record = loaded();
      await takeHourly(deps, principal.business.id, [budget]);
      return operation.write(deps, principal, input, record);
    },
  };
}

/** `POST /sandbox/events`: the event as the core platform would cause it. */
export const emitSandboxEventOperation = sandboxOnly(SANDBOX_EVENTS, {
  read: (side, _input: { event: EventName }) => sandboxEventRead(side),
  write: (deps, principal, { event }, loaded) => emitSandboxEvent(deps, principal.business, event, loaded),
});

/** `POST /sandbox/intakes/{id}/conversations`: a customer's conversation, through the real IntakeConversation. */
export const runSandboxIntakeOperation = (
  env: { INTAKE_CONVERSATIONS: DurableObjectNamespace<IntakeConversation> } & JurisdictionSwitch,
) =>
  sandboxOnly(SANDBOX_EVENTS, {
    read: (side, { id }: ConversationRequest) => sandboxIntake(side, id),
    write: (deps, principal, request, intake) => runSandboxIntake(env, deps, principal.business, intake, request),
  });

/** `POST /sandbox/actions/{id}/calls`: the Secretary's call of the action. */
export const callSandboxActionOperation = sandboxOnly(SANDBOX_ACTION_CALLS, {
  read: (side, { id }: { id: string; arguments: Record<string, unknown>; message?: string }) => sandboxAction(side, id),
  write: (deps, principal, request, action) => callSandboxAction(deps, principal.business, action, request),
});
