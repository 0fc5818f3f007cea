import { zValidator } from "@hono/zod-validator";
import { Hono } from "hono";
import { z } from "zod";
import type { AppEnv } from "../../app-env";
import { onRuntimeShard } from "../../domain/access/runtime-shard";
import { reportChange } from "../../domain/platform/changes";
import { rejectInvalid } from "../../lib/validation";
import { BusinessIdParam } from "../../schemas/runtime";

/**
 * The core platform reports booking, order, payment, lead and review changes. 201 when events were emitted, 200
 * when the report changed nothing (docs/decisions.md, Events from the core platform).
 */
export const platformEvents = new Hono<AppEnv>().post(
  "/businesses/:id/events",
  zValidator("param", BusinessIdParam, rejectInvalid),
  zValidator("json", z.unknown(), rejectInvalid),
  async (c) => {
    const { id } = c.req.valid("param");
    const events = await onRuntimeShard(c.var.globalDeps, id, "write", (deps) =>
      reportChange(deps, id, c.req.valid("json")),
    );
    return c.json({ events }, events.length > 0 ? 201 : 200);
  },
);
