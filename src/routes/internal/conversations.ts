import { zValidator } from "@hono/zod-validator";
import type { Context } from "hono";
import { Hono } from "hono";
import { z } from "zod";
import type { AppEnv } from "../../app-env";
import type { RuntimeAccess } from "../../domain/access/runtime-shard";
import { rejectInvalid } from "../../lib/validation";
import { conversationTurn } from "../../runtime/conversation-turns";
import { BusinessIdParam, ConversationParam } from "../../schemas/runtime";

const params = zValidator("param", BusinessIdParam.extend(ConversationParam.shape), rejectInvalid);
// The Durable Object validates the body with its own schema; here it only has to be JSON.
const jsonBody = zValidator("json", z.unknown(), rejectInvalid);

/** The turn of the conversation in the path (src/runtime/conversation-turns.ts). */
const inConversation = <T>(
  c: Context<AppEnv>,
  { id, cid }: { id: string; cid: string },
  access: RuntimeAccess,
  turn: Parameters<typeof conversationTurn<T>>[4],
) => conversationTurn(c.env, c.var.globalDeps, { businessId: id, conversationId: cid }, access, turn);

/**
 * The HTTP mirror of the IntakeConversation methods (README.md, The Secretary runtime API), for runtimes that are
 * not Workers, for curl and for tests. Each route forwards to the conversation's object and answers its result.
 */
export const conversations = new Hono<AppEnv>()
  .post("/businesses/:id/conversations/:cid/intake", params, jsonBody, async (c) => {
    const body = c.req.valid("json");
    const value = await inConversation(c, c.req.valid("param"), "write", (object, business, now) =>
      object.start(business, body, now),
    );
    return c.json(value, 201);
  })
  .post("/businesses/:id/conversations/:cid/intake/answers", params, jsonBody, async (c) => {
    const body = c.req.valid("json");
    const value = await inConversation(c, c.req.valid("param"), "write", (object, business, now) =>
      object.answer(business, body, now),
    );
    return c.json(value, 200);
  })
  .post("/businesses/:id/conversations/:cid/intake/decline", params, async (c) => {
    const value = await inConversation(c, c.req.valid("param"), "write", (object, business, now) =>
      object.decline(business, now),
    );
    return c.json(value, 200);
  })
  .get("/businesses/:id/conversations/:cid/intake", params, async (c) => {
    const value = await inConversation(c, c.req.valid("param"), "read", (object, business, now) =>
      object.state(business, now),
    );
    return c.json(value, 200);
  });
