import { zValidator } from "@hono/zod-validator";
import { Hono } from "hono";
import type { AppEnv } from "../../app-env";
import { onRuntimeShard } from "../../domain/access/runtime-shard";
import { secretaryContext } from "../../domain/secretary/context";
import { rejectInvalid } from "../../lib/validation";
import { BusinessIdParam, ContextQuery } from "../../schemas/runtime";

/**
 * What the Secretary may use on a channel: the settings, pushed knowledge as information, the enabled actions and
 * intakes where they run (README.md, The Secretary runtime API; docs/decisions.md, The intake conversation).
 */
export const context = new Hono<AppEnv>().get(
  "/businesses/:id/context",
  zValidator("param", BusinessIdParam, rejectInvalid),
  zValidator("query", ContextQuery, rejectInvalid),
  async (c) => {
    const { id } = c.req.valid("param");
    const { channel } = c.req.valid("query");
    const context = await onRuntimeShard(c.var.globalDeps, id, "read", (deps, readsMarked) =>
      secretaryContext(deps, id, channel, readsMarked),
    );
    return c.json(context, 200);
  },
);
