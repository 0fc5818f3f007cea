import { zValidator } from "@hono/zod-validator";
import { Hono } from "hono";
import type { AppEnv } from "../../app-env";
import { setPlan } from "../../domain/access/businesses";
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
    const business = await setPlan(c.var.deps, c.req.valid("param").id, c.req.valid("json"));
    return c.json(business, 200);
  },
);
