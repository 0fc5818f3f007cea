// `npm run size` (part of `npm test`): the Worker as `wrangler deploy` would upload it, against its budget
// (docs/performance.md). A bundle is what every cold start parses, so it may only grow by a decision: raise the
// budget here, and say why in docs/performance.md.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runWranglerCaptured } from "./wrangler.ts";

/**
 * Gzipped KiB; how it grew, change by change, is in docs/performance.md (Bundle).
 */
const BUDGET_GZIP_KIB = 278;

const outdir = mkdtempSync(join(tmpdir(), "secretary-bundle-"));
try {
  // No flag of its own: minified by wrangler.toml's `minify = true`, exactly as `wrangler deploy` builds it.
  const { stdout, stderr } = await runWranglerCaptured(["deploy", "--dry-run", "--outdir", outdir]);
  const match = /Total Upload: ([\d.]+) KiB \/ gzip: ([\d.]+) KiB/.exec(stdout + stderr);
  if (!match) throw new Error(`wrangler did not print the upload size:\n${stdout}${stderr}`);
  const [, raw = 0, gzip = 0] = match.map(Number);
  const verdict = gzip <= BUDGET_GZIP_KIB ? "within" : "OVER";
  console.log(`Worker bundle: ${raw} KiB, ${gzip} KiB gzipped: ${verdict} its budget of ${BUDGET_GZIP_KIB} KiB.`);
  if (gzip > BUDGET_GZIP_KIB) process.exitCode = 1;
} finally {
  rmSync(outdir, { recursive: true, force: true });
}
