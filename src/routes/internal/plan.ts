import { zValidator } from "@hono/zod-validator";
import { Hono } from "hono";
import type { AppEnv } from "../../app-env";
import { setPlan } from "../../domain/access/businesses";
import { onRuntimeShard } from "../../domain/access/runtime-shard";
import { rejectInvalid } from "../../lib/validation";
import { BusinessIdParam, PlanChange } from "../../schemas/runtime";

/**
 * The billing side sets a business's plan, `PUT /internal/v1/businesses/{id}/plan`, and gets the business with its
 * plan back (docs/decisions.md, The Secretary runtime API).
 */
export const plan = new Hono<AppEnv>().put(
  "/businesses/:id/plan",
  zValidator("param", BusinessIdParam, rejectInvalid),
  zValidator("json", PlanChange, rejectInvalid),
  async (c) => {
    const { id } = c.req.valid("param");
    const business = await onRuntimeShard(c.var.globalDeps, id, "write", (deps) =>
      setPlan(deps, id, c.req.valid("json")),
    );
    return c.json(business, 200);
  },
);
