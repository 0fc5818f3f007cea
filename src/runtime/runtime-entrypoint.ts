import { WorkerEntrypoint } from "cloudflare:workers";
import { dependenciesFromEnv } from "../dependencies-from-env";
import { setPlan } from "../domain/access/businesses";
import { callActionByName } from "../domain/actions/calls";
import { reportChange } from "../domain/platform/changes";
import { secretaryContext } from "../domain/secretary/context";
import { conversationObject } from "../durable-objects/intake-conversation";
import type { Env } from "../env";
import { settle } from "../lib/settle";
import { parseOrThrow } from "../lib/validation";
import { ActionCallBody, ActionCallParams, BusinessIdParam, ContextQuery, PlanChange } from "../schemas/runtime";

/**
 * The Secretary runtime API as typed RPC, for Workers bound to this one by a service binding (docs/decisions.md, The
 * Secretary runtime API). Each method validates its input with the same zod schema as its HTTP mirror under
 * `/internal/v1` and calls the same domain function, so the two cannot drift apart.
 */
export class RuntimeApi extends WorkerEntrypoint<Env> {
  /** What this call's domain work uses (src/dependencies.ts): its deliveries are enqueued after its answer. */
  private dependencies() {
    return dependenciesFromEnv(this.env, (work) => this.ctx.waitUntil(work));
  }

  setPlan(businessId: string, change: { plan: string; active: boolean }) {
    return settle(() => {
      const { id } = parseOrThrow(BusinessIdParam, { id: businessId }, "param");
      return setPlan(this.dependencies(), id, parseOrThrow(PlanChange, change, "json"));
    });
  }

  /** `POST /internal/v1/businesses/{id}/events`: store the snapshot, emit what the change means. */
  reportChange(businessId: string, body: unknown) {
    return settle(() => {
      const { id } = parseOrThrow(BusinessIdParam, { id: businessId }, "param");
      return reportChange(this.dependencies(), id, body);
    });
  }

  /** `POST /internal/v1/businesses/{id}/actions/{name}/call`: the Secretary calls a connected action. */
  callAction(businessId: string, name: string, body: unknown) {
    return settle(() => {
      const { id } = parseOrThrow(ActionCallParams, { id: businessId, name }, "param");
      return callActionByName(this.dependencies(), id, name, parseOrThrow(ActionCallBody, body, "json"));
    });
  }

  /** `GET /internal/v1/businesses/{id}/context?channel=C`: what the Secretary may use on that channel. */
  context(businessId: string, channel: string) {
    return settle(() => {
      const { id } = parseOrThrow(BusinessIdParam, { id: businessId }, "param");
      return secretaryContext(this.dependencies(), id, parseOrThrow(ContextQuery, { channel }, "query").channel);
    });
  }

  /**
   * The conversation's intake (docs/decisions.md, The intake conversation): the same methods as its Durable Object,
   * reached by conversation id.
   */
  startIntake(conversationId: string, body: unknown) {
    return conversationObject(this.env, conversationId).start(conversationId, body);
  }

  answerIntake(conversationId: string, body: unknown) {
    return conversationObject(this.env, conversationId).answer(body);
  }

  declineIntake(conversationId: string) {
    return conversationObject(this.env, conversationId).decline();
  }

  intakeState(conversationId: string) {
    return conversationObject(this.env, conversationId).state();
  }
}
