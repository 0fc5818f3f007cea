import { zValidator } from "@hono/zod-validator";
import { Hono } from "hono";
import type { AppEnv } from "../../app-env";
import { moveBusiness } from "../../domain/operations/business-move";
import { rejectInvalid } from "../../lib/validation";
import { requireOperator } from "../../middleware/authenticate-operator";
import { BusinessIdParam, BusinessMove } from "../../schemas/runtime";

/**
 * The operators move a business to another shard, one step per call, `POST /internal/v1/businesses/{id}/move` with
 * `{ "to": <shard> }` and the operator token: 202 while steps remain, 200 once moved or undone (docs/scaling.md,
 * Moving a business between shards; `npm run move-business`).
 */
export const businessMove = new Hono<AppEnv>().post(
  "/businesses/:id/move",
  requireOperator,
  zValidator("param", BusinessIdParam, rejectInvalid),
  zValidator("json", BusinessMove, rejectInvalid),
  async (c) => {
    const answer = await moveBusiness(c.var.globalDeps, c.req.valid("param").id, c.req.valid("json").to);
    return c.json(answer, answer.status === "moved" || answer.status === "undone" ? 200 : 202);
  },
);
