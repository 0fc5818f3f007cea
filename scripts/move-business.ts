// `npm run move-business -- --business <id> --to <shard> [--base-url URL]`: moves a business to another shard
// through `POST /internal/v1/businesses/{id}/move` (docs/scaling.md, Moving a business between shards; docs/operations.md,
// Moving a business), with OPERATOR_TOKEN from the environment or `.dev.vars`, against BASE_URL from the same places
// unless given. Calls step after step, printing each one's status, until the move answers 200 (moved, or undone when
// `--to` is the shard the business is in while a move is under way). Any other answer exits 1 and says what to do; a
// move stopped by a failure is finished by running the same command again.
import { existsSync } from "node:fs";
import { parseArgs } from "node:util";
import { DEV_VARS_PATH, readDevVars } from "./wrangler.ts";

const USAGE = "Usage: npm run move-business -- --business <id> --to <shard> [--base-url URL]";

const { values } = parseArgs({
  options: { business: { type: "string" }, to: { type: "string" }, "base-url": { type: "string" } },
  strict: true,
  allowPositionals: false,
});
const devVars = existsSync(DEV_VARS_PATH) ? readDevVars() : {};
const token = process.env.OPERATOR_TOKEN ?? devVars.OPERATOR_TOKEN;
const baseUrl = values["base-url"] ?? process.env.BASE_URL ?? devVars.BASE_URL;
const { business, to } = values;
if (!business || !to) {
  console.error(USAGE);
  process.exit(2);
}
if (!token || !baseUrl) {
  console.error(
    "OPERATOR_TOKEN and BASE_URL are needed: set them in the environment or .dev.vars (or pass --base-url).",
  );
  process.exit(2);
}

type Step = { status: string; from: string; to: string; rows_copied: number; table?: string; reason?: string };

/** What to do after a 409, by its code: the sentence of the answer says which table, or which move. */
const AFTER_CONFLICT: Record<string, string> = {
  move_conflict:
    "Nothing was switched or deleted, and the copy was undone. Find out why the target holds rows with this business's keys before moving it there again.",
  move_mismatch:
    "Nothing was switched or deleted, and the copy was undone. The business's rows changed while it moved (a delivery attempted, a credential used): run the move again.",
  move_in_progress: "Run the command with the --to the sentence names, to finish that move or to undo it.",
};

const url = new URL(`/internal/v1/businesses/${encodeURIComponent(business)}/move`, baseUrl);
for (let step = 1; ; step++) {
  const response = await fetch(url, {
    method: "POST",
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
    body: JSON.stringify({ to }),
  });
  const text = await response.text();
  if (response.status === 200) {
    console.log(text);
    process.exit(0);
  }
  if (response.status !== 202) {
    console.error(`The move failed (${response.status}): ${text}`);
    const code = response.status === 409 ? (JSON.parse(text) as { code?: string }).code : undefined;
    if (code && AFTER_CONFLICT[code]) console.error(AFTER_CONFLICT[code]);
    if (response.status >= 500)
      console.error("Run the same command again: the move goes on from its last recorded step.");
    process.exit(1);
  }
  const answer = JSON.parse(text) as Step;
  const at = answer.table ? ` (${answer.table})` : "";
  const reason = answer.reason ? `: ${answer.reason}` : "";
  console.log(
    `step ${step}: ${answer.status}${at}, ${answer.rows_copied} rows copied from ${answer.from} to ${answer.to}${reason}`,
  );
}
