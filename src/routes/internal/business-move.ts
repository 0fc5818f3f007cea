import { zValidator } from "@hono/zod-validator";
import { Hono } from "hono";
import type { AppEnv } from "../../app-env";
import { moveBusiness } from "../../domain/operations/business-move";
import { rejectInvalid } from "../../lib/validation";
import { BusinessIdParam, BusinessMove } from "../../schemas/runtime";

/**
 * The operators move a business to another shard, `POST /internal/v1/businesses/{id}/move` with `{ "to": <shard> }`
 * (docs/scaling.md, Moving a business between shards; `npm run move-business`).
 */
export const businessMove = new Hono<AppEnv>().post(
  "/businesses/:id/move",
  zValidator("param", BusinessIdParam, rejectInvalid),
  zValidator("json", BusinessMove, rejectInvalid),
  async (c) => c.json(await moveBusiness(c.var.deps, c.req.valid("param").id, c.req.valid("json").to), 200),
);
