import { execFile } from "node:child_process";
import { copyFileSync, cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import type { TestProject } from "vitest/node";
import { configCopy, snapshotBundle } from "../scripts/local-worker.ts";
import { applyMigrations, d1Bindings } from "../scripts/migrate.ts";
import { DEV_VARS_PATH, ensureDevVars, PROJECT_ROOT } from "../scripts/wrangler.ts";

declare module "vitest" {
  export interface ProvidedContext {
    /**
     * A local state folder with every database migrated and nothing else: each file starts on a copy of it, made
     * beside it in the run's folder, which goes when the run ends.
     */
    migratedState: string;
    /** The wrangler.toml of the Worker bundled once for the run, with a copy of `.dev.vars` beside it. */
    workerConfig: string;
  }
}

const CONFIG = join(PROJECT_ROOT, "wrangler.toml");

/**
 * Migrates every database of the project into the local state `state`, all at once: one `wrangler d1 migrations
 * apply` per database (scripts/migrate.ts), each with a copy of wrangler.toml that binds that database alone (its
 * block cut up to the next section), as each keeps one core busy for about ten seconds. Each runs in a state folder
 * of its own, as two workerd cannot hold one state's bookkeeping at once (SQLITE_BUSY); then the folders are merged:
 * each database is a file of its own, and the files they share are that bookkeeping, of alarms, none set.
 */
async function migrateSideBySide(run: string, state: string) {
  const bindings = d1Bindings(readFileSync(CONFIG, "utf8"));
  const folders = await Promise.all(
    bindings.map(async (binding) => {
      const others = new RegExp(`^\\[\\[d1_databases\\]\\]\\nbinding = "(?!${binding}")[^]*?(?=^\\[)`, "gm");
      const configPath = join(run, `${binding}.toml`);
      writeFileSync(configPath, configCopy(CONFIG, [[others, ""]]));
      const persistTo = join(run, binding);
      await applyMigrations({ configPath, persistTo });
      return persistTo;
    }),
  );
  for (const folder of folders) cpSync(folder, state, { recursive: true });
}

/**
 * What every browser test file needs, made once before any starts, side by side:
 * - one migrated local state: migrating the databases of an empty state takes a minute of CPU, copying the folder
 *   milliseconds;
 * - one bundle of the Worker (scripts/local-worker.ts, snapshotBundle), which each file's `wrangler dev` runs as it
 *   is: no file bundles it again, and an edit of src/ during the run reloads none of them;
 * - the SDK and the CLI built: test-e2e/cli.e2e.ts runs cli/dist while test-e2e/packages.e2e.ts packs it, and a
 *   build during the pack would rewrite the files under the running CLI;
 * - `.dev.vars`, whose RUNTIME_TOKEN the seed and the Worker must share: two files' seeds must not both create it.
 */
export default async function setup(project: TestProject) {
  const run = mkdtempSync(join(tmpdir(), "secretary-e2e-"));
  const state = join(run, "migrated");
  const worker = join(run, "worker");
  ensureDevVars();
  const [, { configPath }] = await Promise.all([
    migrateSideBySide(run, state),
    snapshotBundle(worker, configCopy(CONFIG)),
    promisify(execFile)("npm", ["run", "build:packages", "--silent"], { cwd: PROJECT_ROOT }),
  ]);
  copyFileSync(DEV_VARS_PATH, join(worker, ".dev.vars"));
  project.provide("migratedState", state);
  project.provide("workerConfig", configPath);
  return () => rmSync(run, { recursive: true, force: true });
}
