import { WorkerEntrypoint } from "cloudflare:workers";
import { globalDependencies } from "../dependencies-from-env";
import { setPlan } from "../domain/access/businesses";
import { onRuntimeShard, type RuntimeAccess } from "../domain/access/runtime-shard";
import { callActionByName } from "../domain/actions/calls";
import { reportChange } from "../domain/platform/changes";
import { secretaryContext } from "../domain/secretary/context";
import type { Env } from "../env";
import { settle } from "../lib/settle";
import { parseOrThrow } from "../lib/validation";
import {
  ActionCallBody,
  ActionCallParams,
  BusinessIdParam,
  ContextQuery,
  ConversationParam,
  PlanChange,
} from "../schemas/runtime";
import { conversationTurn } from "./conversation-turns";

/**
 * The Secretary runtime API as typed RPC, for Workers bound to this one by a service binding (docs/decisions.md, The
 * Secretary runtime API). Each method validates its input with the same zod schema as its HTTP mirror under
 * `/internal/v1` and calls the same domain function, so the two cannot drift apart.
 */
export class RuntimeApi extends WorkerEntrypoint<Env> {
  /** What this call's domain work uses before it knows the shard: its deliveries are enqueued after its answer. */
  private get deps() {
    return globalDependencies(this.env, (work) => this.ctx.waitUntil(work));
  }

  /** Runs this call's domain work on the business's shard (`onRuntimeShard`, a write refused while it moves). */
  private onShard<T>(businessId: string, access: RuntimeAccess, run: Parameters<typeof onRuntimeShard<T>>[3]) {
    return onRuntimeShard(this.deps, businessId, access, run);
  }

  setPlan(businessId: string, change: { plan: string; active: boolean }) {
    return settle(async () => {
      const { id } = parseOrThrow(BusinessIdParam, { id: businessId }, "param");
      const plan = parseOrThrow(PlanChange, change, "json");
      return this.onShard(id, "write", (deps) => setPlan(deps, id, plan));
    });
  }

  /** `POST /internal/v1/businesses/{id}/events`: store the snapshot, emit what the change means. */
  reportChange(businessId: string, body: unknown) {
    return settle(async () => {
      const { id } = parseOrThrow(BusinessIdParam, { id: businessId }, "param");
      return this.onShard(id, "write", (deps) => reportChange(deps, id, body));
    });
  }

  /** `POST /internal/v1/businesses/{id}/actions/{name}/call`: the Secretary calls a connected action. */
  callAction(businessId: string, name: string, body: unknown) {
    return settle(async () => {
      const { id } = parseOrThrow(ActionCallParams, { id: businessId, name }, "param");
      const call = parseOrThrow(ActionCallBody, body, "json");
      return this.onShard(id, "write", (deps) => callActionByName(deps, id, name, call));
    });
  }

  /** `GET /internal/v1/businesses/{id}/context?channel=C`: what the Secretary may use on that channel. */
  context(businessId: string, channel: string) {
    return settle(async () => {
      const { id } = parseOrThrow(BusinessIdParam, { id: businessId }, "param");
      const query = parseOrThrow(ContextQuery, { channel }, "query");
      return this.onShard(id, "read", (deps, readsMarked) => secretaryContext(deps, id, query.channel, readsMarked));
    });
  }

  /** A turn of the conversation's intake, found as its HTTP mirror finds it (src/runtime/conversation-turns.ts). */
  private turn<T>(
    businessId: string,
    conversationId: string,
    access: RuntimeAccess,
    turn: Parameters<typeof conversationTurn<T>>[4],
  ) {
    return settle(async () => {
      const { id, cid } = parseOrThrow(
        BusinessIdParam.extend(ConversationParam.shape),
        { id: businessId, cid: conversationId },
        "param",
      );
      return conversationTurn(this.env, this.deps, { businessId: id, conversationId: cid }, access, turn);
    });
  }

  /** The conversation's intake: the same methods as its Durable Object, reached by business and conversation id. */
  startIntake(businessId: string, conversationId: string, body: unknown) {
    return this.turn(businessId, conversationId, "write", (object, business, now) => object.start(business, body, now));
  }

  answerIntake(businessId: string, conversationId: string, body: unknown) {
    return this.turn(businessId, conversationId, "write", (object, business, now) =>
      object.answer(business, body, now),
    );
  }

  declineIntake(businessId: string, conversationId: string) {
    return this.turn(businessId, conversationId, "write", (object, business, now) => object.decline(business, now));
  }

  intakeState(businessId: string, conversationId: string) {
    return this.turn(businessId, conversationId, "read", (object, business, now) => object.state(business, now));
  }
}
