import { zValidator } from "@hono/zod-validator";
import type { Context } from "hono";
import { Hono } from "hono";
import { z } from "zod";
import type { AppEnv } from "../../app-env";
import { conversationObject } from "../../durable-objects/jurisdictions";
import { unsettle } from "../../lib/settle";
import { rejectInvalid } from "../../lib/validation";
import { BusinessIdParam, ConversationParam } from "../../schemas/runtime";

const params = zValidator("param", BusinessIdParam.extend(ConversationParam.shape), rejectInvalid);
// The Durable Object validates the body with its own schema; here it only has to be JSON.
const jsonBody = zValidator("json", z.unknown(), rejectInvalid);

/**
 * The conversation's object, in the jurisdiction of its business's shard, which the runtime API's middleware has just
 * read from the directory (a write refused while the business moves: docs/scaling.md, Moving a business between
 * shards).
 */
const conversation = (c: Context<AppEnv>, { id, cid }: { id: string; cid: string }) => {
  const business = { conversationId: cid, businessId: id, shard: c.var.deps.shard };
  return { business, object: conversationObject(c.env, business) };
};

/**
 * The HTTP mirror of the IntakeConversation methods (README.md, The Secretary runtime API), for runtimes that are
 * not Workers, for curl and for tests. Each route forwards to the conversation's object and answers its result.
 */
export const conversations = new Hono<AppEnv>()
  .post("/businesses/:id/conversations/:cid/intake", params, jsonBody, async (c) => {
    const { business, object } = conversation(c, c.req.valid("param"));
    return c.json(unsettle(await object.start(business, c.req.valid("json"))), 201);
  })
  .post("/businesses/:id/conversations/:cid/intake/answers", params, jsonBody, async (c) => {
    const { business, object } = conversation(c, c.req.valid("param"));
    return c.json(unsettle(await object.answer(business, c.req.valid("json"))), 200);
  })
  .post("/businesses/:id/conversations/:cid/intake/decline", params, async (c) => {
    const { business, object } = conversation(c, c.req.valid("param"));
    return c.json(unsettle(await object.decline(business)), 200);
  })
  .get("/businesses/:id/conversations/:cid/intake", params, async (c) => {
    const { business, object } = conversation(c, c.req.valid("param"));
    return c.json(unsettle(await object.state(business)), 200);
  });
