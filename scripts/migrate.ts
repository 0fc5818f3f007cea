// `npm run db:migrate:local` and `npm run db:migrate:remote` (docs/operations.md, Deploying): applies migrations/ to
// every D1 database, one after the other: `wrangler d1 migrations apply <binding> --local|--remote` per binding, then
// the statement that puts the shard's id sequences in its own slot (src/db/ids.ts).
// The databases are the shards of src/db/shards.ts (legacy's `DB` first, which also holds the global tables); each is
// a [[d1_databases]] block of wrangler.toml, and a block no shard names is an error, so that the list of shards and
// the configuration cannot drift apart (docs/scaling.md, Migrations). `npm start`, the seed, the soak and the bench
// migrate through `applyMigrations` too.
//
//   node scripts/migrate.ts --local [--config <wrangler.toml>] [--persist-to <folder>]
//   node scripts/migrate.ts --remote [--config <wrangler.toml>]
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { SHARDS, type ShardName } from "./service.ts";
import { PROJECT_ROOT, runWranglerCaptured, WranglerError, whereArgs } from "./wrangler.ts";

// src/db/ids.ts imports "./shards" without an extension, as the bundler resolves it: it is loaded after
// scripts/service.ts has registered its resolve hook, which a static import here would come before.
const { idSlotStatements } = await import("../src/db/ids.ts");

/** The `binding` of each `[[d1_databases]]` block of a wrangler.toml's text, in their order. */
export function d1Bindings(config: string): string[] {
  return config
    .split(/^\[\[d1_databases\]\][ \t]*$/m)
    .slice(1)
    .flatMap((block) => {
      const binding = /^binding = "([^"]+)"/m.exec(block.split(/^\[/m)[0] ?? "")?.[1];
      return binding ? [binding] : [];
    });
}

/**
 * The databases of the configuration at `configPath` (the project's wrangler.toml unless given), in the order of
 * src/db/shards.ts. The project's own configuration must bind every shard; a copy of another Worker's (the bench's
 * floor) may bind some of them only.
 */
export function databasesOf(configPath?: string): Array<{ shard: ShardName; binding: string }> {
  const path = configPath ?? join(PROJECT_ROOT, "wrangler.toml");
  const bindings = d1Bindings(readFileSync(path, "utf8"));
  const shards = Object.entries(SHARDS) as Array<[ShardName, (typeof SHARDS)[ShardName]]>;
  const unknown = bindings.filter((binding) => !shards.some(([, shard]) => shard.binding === binding));
  if (unknown.length > 0) {
    throw new Error(`${path} binds D1 databases that src/db/shards.ts does not list: ${unknown.join(", ")}.`);
  }
  const missing = shards.filter(([, { binding }]) => !bindings.includes(binding));
  if (configPath === undefined && missing.length > 0) {
    const names = missing.map(([name, { binding }]) => `${binding} (shard ${name})`).join(", ");
    throw new Error(`wrangler.toml has no [[d1_databases]] block for ${names}, which src/db/shards.ts lists.`);
  }
  return shards.flatMap(([shard, { binding }]) => (bindings.includes(binding) ? [{ shard, binding }] : []));
}

export type MigrationTarget = { configPath?: string; persistTo?: string; remote?: boolean };

/**
 * Applies the migrations to every database of the configuration, one after the other; `log` hears which one is under
 * way, and `output` what wrangler printed for it once done. Locally, in the state folder of `persistTo` (`.wrangler/state` unless given); with `remote`, in
 * Cloudflare's databases. Stops at the first failure, naming the databases already migrated: migrations are
 * additive, so running it again after the fix is safe.
 */
export async function applyMigrations(
  target: MigrationTarget = {},
  { log, output }: { log?: (message: string) => void; output?: (text: string) => void } = {},
): Promise<void> {
  const { configPath, remote = false } = target;
  // A local state folder means nothing to the remote databases.
  const where = remote ? (configPath ? ["-c", configPath] : []) : whereArgs(target);
  const done: string[] = [];
  for (const { shard, binding } of databasesOf(configPath)) {
    log?.(`Applying the migrations to ${binding} (shard ${shard}${remote ? ", remote" : ""})...`);
    try {
      const args = ["d1", "migrations", "apply", binding, remote ? "--remote" : "--local", ...where];
      const { stdout } = await runWranglerCaptured(args);
      output?.(stdout);
      // The shard numbers its rows in its own slot (src/db/ids.ts), once the migrations made its sequences.
      const slot = idSlotStatements(shard);
      if (slot.length > 0) {
        await runWranglerCaptured([
          "d1",
          "execute",
          binding,
          remote ? "--remote" : "--local",
          ...where,
          "--command",
          slot.join("; "),
        ]);
      }
      done.push(binding);
    } catch (error) {
      if (error instanceof WranglerError) {
        error.message += `\n(Databases migrated before it: ${done.join(", ") || "none"}.)`;
      }
      throw error;
    }
  }
}

async function main() {
  const { values } = parseArgs({
    options: {
      local: { type: "boolean", default: false },
      remote: { type: "boolean", default: false },
      config: { type: "string" },
      "persist-to": { type: "string" },
    },
    strict: true,
  });
  if (values.local === values.remote) {
    process.stderr.write(
      "Usage: node scripts/migrate.ts --local|--remote [--config <wrangler.toml>] [--persist-to <folder>]\n",
    );
    process.exitCode = 2;
    return;
  }
  const log = (message: string) => process.stderr.write(`${message}\n`);
  try {
    const target = { configPath: values.config, persistTo: values["persist-to"], remote: values.remote };
    await applyMigrations(target, { log, output: (text) => process.stdout.write(text) });
  } catch (error) {
    log(error instanceof Error ? error.message : String(error));
    process.exitCode = 1;
  }
}

if (import.meta.main) await main();
