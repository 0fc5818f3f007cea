import { WorkerEntrypoint } from "cloudflare:workers";
import { globalDatabase } from "../db/client";
import { dependenciesFromEnv } from "../dependencies-from-env";
import { setPlan } from "../domain/access/businesses";
import { type RuntimeAccess, shardForRuntime } from "../domain/access/runtime-shard";
import { callActionByName } from "../domain/actions/calls";
import { reportChange } from "../domain/platform/changes";
import { secretaryContext } from "../domain/secretary/context";
import { conversationObject } from "../durable-objects/jurisdictions";
import type { Env } from "../env";
import { settle, unsettle } from "../lib/settle";
import { parseOrThrow } from "../lib/validation";
import {
  ActionCallBody,
  ActionCallParams,
  BusinessIdParam,
  ContextQuery,
  ConversationParam,
  PlanChange,
} from "../schemas/runtime";

/**
 * The Secretary runtime API as typed RPC, for Workers bound to this one by a service binding (docs/decisions.md, The
 * Secretary runtime API). Each method validates its input with the same zod schema as its HTTP mirror under
 * `/internal/v1` and calls the same domain function, so the two cannot drift apart.
 */
export class RuntimeApi extends WorkerEntrypoint<Env> {
  /**
   * What this call's domain work for `businessId` uses (src/dependencies.ts), on the business's shard, a write refused
   * while the business moves (src/domain/access/runtime-shard.ts): its deliveries are enqueued after its answer.
   */
  private async dependencies(businessId: string, access: RuntimeAccess) {
    const shard = await shardForRuntime(globalDatabase(this.env.DB), businessId, access);
    return dependenciesFromEnv(this.env, (work) => this.ctx.waitUntil(work), { shard });
  }

  setPlan(businessId: string, change: { plan: string; active: boolean }) {
    return settle(async () => {
      const { id } = parseOrThrow(BusinessIdParam, { id: businessId }, "param");
      return setPlan(await this.dependencies(id, "write"), id, parseOrThrow(PlanChange, change, "json"));
    });
  }

  /** `POST /internal/v1/businesses/{id}/events`: store the snapshot, emit what the change means. */
  reportChange(businessId: string, body: unknown) {
    return settle(async () => {
      const { id } = parseOrThrow(BusinessIdParam, { id: businessId }, "param");
      return reportChange(await this.dependencies(id, "write"), id, body);
    });
  }

  /** `POST /internal/v1/businesses/{id}/actions/{name}/call`: the Secretary calls a connected action. */
  callAction(businessId: string, name: string, body: unknown) {
    return settle(async () => {
      const { id } = parseOrThrow(ActionCallParams, { id: businessId, name }, "param");
      return callActionByName(
        await this.dependencies(id, "write"),
        id,
        name,
        parseOrThrow(ActionCallBody, body, "json"),
      );
    });
  }

  /** `GET /internal/v1/businesses/{id}/context?channel=C`: what the Secretary may use on that channel. */
  context(businessId: string, channel: string) {
    return settle(async () => {
      const { id } = parseOrThrow(BusinessIdParam, { id: businessId }, "param");
      return secretaryContext(
        await this.dependencies(id, "read"),
        id,
        parseOrThrow(ContextQuery, { channel }, "query").channel,
      );
    });
  }

  /**
   * The conversation's object and its business (docs/decisions.md, The intake conversation), found as its HTTP mirror
   * finds them: the business's shard from the directory now, a write refused while it moves.
   */
  private async conversation(businessId: string, conversationId: string, access: RuntimeAccess) {
    const { id, cid } = parseOrThrow(
      BusinessIdParam.extend(ConversationParam.shape),
      { id: businessId, cid: conversationId },
      "param",
    );
    const shard = await shardForRuntime(globalDatabase(this.env.DB), id, access);
    const business = { conversationId: cid, businessId: id, shard };
    return { business, object: conversationObject(this.env, business) };
  }

  /** The conversation's intake: the same methods as its Durable Object, reached by business and conversation id. */
  startIntake(businessId: string, conversationId: string, body: unknown) {
    return settle(async () => {
      const { business, object } = await this.conversation(businessId, conversationId, "write");
      return unsettle(await object.start(business, body));
    });
  }

  answerIntake(businessId: string, conversationId: string, body: unknown) {
    return settle(async () => {
      const { business, object } = await this.conversation(businessId, conversationId, "write");
      return unsettle(await object.answer(business, body));
    });
  }

  declineIntake(businessId: string, conversationId: string) {
    return settle(async () => {
      const { business, object } = await this.conversation(businessId, conversationId, "write");
      return unsettle(await object.decline(business));
    });
  }

  intakeState(businessId: string, conversationId: string) {
    return settle(async () => {
      const { business, object } = await this.conversation(businessId, conversationId, "read");
      return unsettle(await object.state(business));
    });
  }
}
