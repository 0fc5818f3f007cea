import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { applyMigrations } from "../scripts/migrate.ts";

declare module "vitest" {
  export interface ProvidedContext {
    /** A local state folder with every database migrated and nothing else: each file starts on a copy of it. */
    migratedState: string;
  }
}

/**
 * Migrates one local state for the whole run. Applying the migrations to the three databases of an empty state
 * takes about a minute of `wrangler d1 migrations apply`; copying the migrated folder takes milliseconds, so each
 * browser test file copies it instead of migrating a state of its own.
 */
export default async function setup(project: TestProject) {
  const state = mkdtempSync(join(tmpdir(), "secretary-e2e-migrated-"));
  await applyMigrations({ persistTo: state });
  project.provide("migratedState", state);
  return () => rmSync(state, { recursive: true, force: true });
}
