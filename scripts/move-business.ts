// `npm run move-business -- --business <id> --to <shard> [--base-url URL]`: moves a business to another shard
// through the runtime API's `POST /internal/v1/businesses/{id}/move` (docs/scaling.md, Moving a business between
// shards), with RUNTIME_TOKEN from the environment or `.dev.vars`, against BASE_URL from the same places unless
// given. Prints the answer; a failed move exits 1 and can be run again to finish.
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
const token = process.env.RUNTIME_TOKEN ?? devVars.RUNTIME_TOKEN;
const baseUrl = values["base-url"] ?? process.env.BASE_URL ?? devVars.BASE_URL;
if (!values.business || !values.to) {
  console.error(USAGE);
  process.exit(2);
}
if (!token || !baseUrl) {
  console.error(
    "RUNTIME_TOKEN and BASE_URL are needed: set them in the environment or .dev.vars (or pass --base-url).",
  );
  process.exit(2);
}

const response = await fetch(new URL(`/internal/v1/businesses/${encodeURIComponent(values.business)}/move`, baseUrl), {
  method: "POST",
  headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
  body: JSON.stringify({ to: values.to }),
});
const answer = await response.text();
if (!response.ok) {
  console.error(`The move failed (${response.status}): ${answer}`);
  process.exit(1);
}
console.log(answer);
