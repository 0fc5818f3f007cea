import type { GlobalDependencies } from "../dependencies";
import { assertPlacedHere, onRuntimeShard, type RuntimeAccess } from "../domain/access/runtime-shard";
import type { IntakeConversation } from "../durable-objects/intake-conversation";
import {
  type ConversationBusiness,
  conversationObject,
  type JurisdictionSwitch,
} from "../durable-objects/jurisdictions";
import { type RuntimeResult, unsettle } from "../lib/settle";
import type { EpochMs } from "../lib/time";

/**
 * One turn of a conversation's intake for the runtime API, HTTP and RPC (docs/decisions.md, The intake
 * conversation): on its business's shard (`onRuntimeShard`, a write refused while the business moves), the
 * business's row checked there, then the conversation's object in that shard's jurisdiction, so that no answer is
 * kept outside the business's region. Answers the turn's value, or throws its refusal.
 */
export function conversationTurn<T>(
  env: { INTAKE_CONVERSATIONS: DurableObjectNamespace<IntakeConversation> } & JurisdictionSwitch,
  deps: GlobalDependencies,
  { businessId, conversationId }: { businessId: string; conversationId: string },
  access: RuntimeAccess,
  turn: (
    object: DurableObjectStub<IntakeConversation>,
    business: ConversationBusiness,
    now: EpochMs,
  ) => Promise<RuntimeResult<T>>,
): Promise<T> {
  return onRuntimeShard(deps, businessId, access, async (onShard, readsMarked) => {
    await assertPlacedHere(onShard, businessId, readsMarked);
    const business = { conversationId, businessId, shard: onShard.shard };
    return unsettle(await turn(conversationObject(env, business), business, onShard.clock()));
  });
}
