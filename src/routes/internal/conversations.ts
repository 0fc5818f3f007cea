import { zValidator } from "@hono/zod-validator";
import { Hono } from "hono";
import { z } from "zod";
import type { AppEnv } from "../../app-env";
import { conversationObject as conversation } from "../../durable-objects/intake-conversation";
import { unsettle } from "../../lib/settle";
import { rejectInvalid } from "../../lib/validation";
import { ConversationParam } from "../../schemas/runtime";

const cidParam = zValidator("param", ConversationParam, rejectInvalid);
// The Durable Object validates the body with its own schema; here it only has to be JSON.
const jsonBody = zValidator("json", z.unknown(), rejectInvalid);

/**
 * The HTTP mirror of the IntakeConversation methods (README.md, The Secretary runtime API), for runtimes that are
 * not Workers, for curl and for tests. Each route forwards to the conversation's object and answers its result.
 */
export const conversations = new Hono<AppEnv>()
  .post("/conversations/:cid/intake", cidParam, jsonBody, async (c) => {
    const { cid } = c.req.valid("param");
    return c.json(unsettle(await conversation(c.env, cid).start(cid, c.req.valid("json"))), 201);
  })
  .post("/conversations/:cid/intake/answers", cidParam, jsonBody, async (c) => {
    return c.json(unsettle(await conversation(c.env, c.req.valid("param").cid).answer(c.req.valid("json"))), 200);
  })
  .post("/conversations/:cid/intake/decline", cidParam, async (c) => {
    return c.json(unsettle(await conversation(c.env, c.req.valid("param").cid).decline()), 200);
  })
  .get("/conversations/:cid/intake", cidParam, async (c) => {
    return c.json(unsettle(await conversation(c.env, c.req.valid("param").cid).state()), 200);
  });
