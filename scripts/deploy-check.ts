// `npm run deploy:check` (docs/operations.md, Before the first deploy): reads a wrangler config as `wrangler deploy`
// would (wrangler's own reader) and prints one line per problem, exiting 1 if there is any. Offline: the secrets
// cannot be seen from here, so they are checked only in a saved `wrangler secret list` (`--secrets-from`).
//
//   node scripts/deploy-check.ts [--config <wrangler.toml>] [--secrets-from <secret-list.json>]
//   node scripts/deploy-check.ts --shape [--config <wrangler.toml>]
//
// The full check is what an operator runs before deploying, and fails on the committed template (its ids and
// addresses are placeholders). `--shape` (part of `npm test`) checks only what the template itself must hold, and
// proves the full check on two fixtures: scripts/fixtures/wrangler-ready.toml passes, and
// scripts/fixtures/wrangler-every-problem.toml raises every kind of problem.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { type Unstable_Config, unstable_readConfig } from "wrangler";
import { SHARDS } from "./service.ts";
import { PROJECT_ROOT } from "./wrangler.ts";

/** The Worker's secrets (src/env.ts), and the ones it reads only during a rotation (docs/operations.md). */
const SECRETS = ["RUNTIME_TOKEN", "OPERATOR_TOKEN"];
const ALL_SECRETS = [...SECRETS, ...SECRETS.map((name) => `${name}_PREVIOUS`)];
/** The database ids this repository commits in place of the ones `wrangler d1 create` prints. */
const PLACEHOLDER_DATABASE_ID = /^00000000-0000-4000-8000-/;
/** The Rate Limiting docs' example ids, which wrangler.toml keeps until the operator picks the account's own. */
const EXAMPLE_NAMESPACE_IDS = new Set(["1001", "1002", "1003", "1004", "1005"]);
/** What the delivery consumer's behaviour rests on (wrangler.toml, [[queues.consumers]]). */
const CONSUMER_SETTINGS = [
  "max_batch_size",
  "max_batch_timeout",
  "max_retries",
  "dead_letter_queue",
  "max_concurrency",
  "retry_delay",
] as const;

/** Every kind of problem: the first eight are the shape's, the rest the full check's own. */
const KINDS = [
  ...["shard", "migrations", "local-switch", "loopback", "minify", "consumer", "secret-in-vars", "shared-namespace"],
  ...["database-id", "base-url", "route", "namespace-id", "secret-missing"],
] as const;
type Kind = (typeof KINDS)[number];

type Problem = { kind: Kind; line: string };

/** What the committed template must hold: the shards bound, the consumer configured, nothing local-only. */
function shapeProblems(config: Unstable_Config): Problem[] {
  const problems: Problem[] = [];
  const add = (kind: Kind, line: string) => problems.push({ kind, line });
  for (const [name, { binding }] of Object.entries(SHARDS)) {
    const block = config.d1_databases.find((database) => database.binding === binding);
    if (!block) add("shard", `No [[d1_databases]] block binds ${binding}, shard ${name} of src/db/shards.ts.`);
    else if (!block.migrations_dir) add("migrations", `${binding} has no migrations_dir (set it to "migrations").`);
  }
  if ("LOCAL_DURABLE_OBJECT_JURISDICTIONS" in config.vars) {
    add("local-switch", "[vars] sets LOCAL_DURABLE_OBJECT_JURISDICTIONS, which only .dev.vars and tests may set.");
  }
  if (config.vars.ALLOW_LOOPBACK_URLS !== "false") {
    add(
      "loopback",
      '[vars] must set ALLOW_LOOPBACK_URLS = "false": webhooks could otherwise reach loopback addresses.',
    );
  }
  if (config.minify !== true)
    add("minify", "minify = true is missing: wrangler deploy would upload the unminified bundle.");
  const consumer = config.queues.consumers?.find(({ queue }) => queue === "webhook-deliveries");
  const unset = CONSUMER_SETTINGS.filter((setting) => consumer?.[setting] === undefined);
  if (unset.length > 0) add("consumer", `The webhook-deliveries consumer does not set ${unset.join(", ")}.`);
  for (const name of ALL_SECRETS.filter((secret) => secret in config.vars)) {
    add("secret-in-vars", `[vars] sets the secret ${name}: remove it and use \`wrangler secret put ${name}\`.`);
  }
  const ids = config.ratelimits.map(({ namespace_id }) => namespace_id);
  for (const id of new Set(ids.filter((id, i) => ids.indexOf(id) !== i))) {
    add("shared-namespace", `Rate Limiting namespace_id ${id} is used twice: the two limits would share one count.`);
  }
  return problems;
}

/**
 * What must hold before `wrangler deploy`: the shape, and every placeholder replaced. `secrets`, the names a saved
 * `wrangler secret list` shows, adds a problem per required secret missing from it.
 */
function deployProblems(config: Unstable_Config, secrets?: string[]): Problem[] {
  const problems = shapeProblems(config);
  const add = (kind: Kind, line: string) => problems.push({ kind, line });
  for (const { binding, database_name, database_id } of config.d1_databases) {
    if (!database_id || PLACEHOLDER_DATABASE_ID.test(database_id)) {
      add(
        "database-id",
        `${binding} has a placeholder database_id: put in what \`wrangler d1 create ${database_name}\` prints.`,
      );
    }
  }
  const baseUrl = URL.parse(String(config.vars.BASE_URL ?? ""));
  const host = baseUrl?.hostname ?? "";
  if (baseUrl?.protocol !== "https:" || /example|localhost|^127\.|^\[/.test(host)) {
    add("base-url", `BASE_URL ${config.vars.BASE_URL ?? "(unset)"} is not the service's public https origin.`);
  }
  const routes = [...(config.routes ?? []), ...(config.route ? [config.route] : [])];
  const patterns = routes.map((route) => (typeof route === "string" ? route : route.pattern));
  if (!patterns.some((pattern) => pattern.replace(/^https?:\/\//, "").split("/")[0] === host)) {
    add("route", `No routes entry serves BASE_URL's host ${host || "(none)"}: add it as a custom domain.`);
  }
  for (const { name, namespace_id } of config.ratelimits.filter(({ namespace_id }) =>
    EXAMPLE_NAMESPACE_IDS.has(namespace_id),
  )) {
    add("namespace-id", `${name} has the example namespace_id ${namespace_id}: give it one of the account's own.`);
  }
  for (const name of SECRETS.filter((secret) => secrets && !secrets.includes(secret))) {
    add("secret-missing", `The secret ${name} is not set: \`wrangler secret put ${name}\`.`);
  }
  return problems;
}

const read = (path: string) => unstable_readConfig({ config: path });
const fixture = (name: string) => join(PROJECT_ROOT, "scripts", "fixtures", name);

/** The full check, proved on its fixtures: lines that say where it is wrong, none when it holds. */
function selfTest(): string[] {
  const failures = deployProblems(read(fixture("wrangler-ready.toml")), SECRETS).map(
    ({ line }) => `The full check fails scripts/fixtures/wrangler-ready.toml: ${line}`,
  );
  const found = new Set(deployProblems(read(fixture("wrangler-every-problem.toml")), []).map(({ kind }) => kind));
  const missed = KINDS.filter((kind) => !found.has(kind));
  if (missed.length > 0) {
    failures.push(`The full check misses in scripts/fixtures/wrangler-every-problem.toml: ${missed.join(", ")}.`);
  }
  return failures;
}

function main() {
  const { values } = parseArgs({
    options: {
      shape: { type: "boolean", default: false },
      config: { type: "string" },
      "secrets-from": { type: "string" },
    },
    strict: true,
  });
  const path = values.config ?? join(PROJECT_ROOT, "wrangler.toml");
  const shown = values.config ?? "wrangler.toml";
  const secretsFile = values["secrets-from"];
  let config: Unstable_Config;
  let secrets: string[] | undefined;
  try {
    config = read(path);
    secrets = secretsFile
      ? (JSON.parse(readFileSync(secretsFile, "utf8")) as Array<{ name: string }>).map(({ name }) => name)
      : undefined;
  } catch (error) {
    const files = [shown, secretsFile].filter(Boolean).join(" and ");
    console.log(`✗ ${error instanceof Error ? error.message : String(error)} (reading ${files})`);
    process.exitCode = 2;
    return;
  }
  const lines = values.shape
    ? [...shapeProblems(config).map(({ line }) => line), ...selfTest()]
    : deployProblems(config, secrets).map(({ line }) => line);
  for (const line of lines) console.log(`✗ ${line}`);
  if (!values.shape && !secrets) {
    console.log(`? ${SECRETS.join(" and ")}: not checked offline; set each with \`wrangler secret put\`, or pass`);
    console.log("  --secrets-from <file> with what `wrangler secret list` printed.");
  }
  if (lines.length > 0) {
    console.log(
      `${lines.length} problem${lines.length === 1 ? "" : "s"} in ${shown} (docs/operations.md, Before the first deploy).`,
    );
    process.exitCode = 1;
  } else if (values.shape) {
    console.log(`deploy:check --shape: ${shown} has the template's shape; the full check holds on its fixtures.`);
  } else {
    console.log(`${shown} is ready for \`wrangler deploy\`.`);
  }
}

if (import.meta.main) main();
