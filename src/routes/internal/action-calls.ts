import { zValidator } from "@hono/zod-validator";
import { Hono } from "hono";
import type { AppEnv } from "../../app-env";
import { onRuntimeShard } from "../../domain/access/runtime-shard";
import { callActionByName } from "../../domain/actions/calls";
import { rejectInvalid } from "../../lib/validation";
import { ActionCallBody, ActionCallParams } from "../../schemas/runtime";

/**
 * The Secretary calls an action during a chat (docs/decisions.md, Calls). 200 with the call record for every outcome of
 * its history (success, timeout, error, rejected: docs/guides/connected-actions.md, The call history); refusals that
 * send and record nothing are errors: 404 unknown business or action, 409 switched off or on a phone call, 422 a
 * required argument missing (the Secretary asks the customer instead), 429 a third call for one message.
 */
export const actionCallsApi = new Hono<AppEnv>().post(
  "/businesses/:id/actions/:name/call",
  zValidator("param", ActionCallParams, rejectInvalid),
  zValidator("json", ActionCallBody, rejectInvalid),
  async (c) => {
    const { id, name } = c.req.valid("param");
    const call = await onRuntimeShard(c.var.globalDeps, id, "write", (deps) =>
      callActionByName(deps, id, name, c.req.valid("json")),
    );
    return c.json(call, 200);
  },
);
