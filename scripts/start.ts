// `npm start` (README.md, Two commands): migrates and seeds the local D1 (scripts/seed.ts), prints the demo
// credentials, then runs `wrangler dev` offline in the foreground (scripts/local-worker.ts) until it exits or is
// stopped; Ctrl-C or a SIGTERM stops wrangler and the workerd it started.
import { startLocalWorker } from "./local-worker.ts";
import { type SeedResult, seed } from "./seed.ts";

const PORT = 8787;
/** wrangler's own default, where a debugger looks first. */
const INSPECTOR_PORT = 9229;

function credentialsBlock(credentials: SeedResult): string {
  const lines = [
    "",
    "Local demo credentials",
    `  Base URL        ${credentials.base_url}`,
    `  Business id     ${credentials.business_id}`,
    `  API key         ${credentials.api_key}`,
    `  Owner           ${credentials.owner_email} / ${credentials.owner_password}`,
    `  Runtime token   ${credentials.runtime_token}`,
    "",
    "Try it:",
    `  curl -H "Authorization: Bearer ${credentials.api_key}" http://localhost:${PORT}/api/v1/me`,
    "",
  ];
  return `${lines.join("\n")}\n`;
}

async function main() {
  let credentials: SeedResult;
  try {
    credentials = await seed();
  } catch (error) {
    process.stderr.write(`Seeding failed: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
    return;
  }
  process.stdout.write(credentialsBlock(credentials));

  const worker = await startLocalWorker({ port: PORT, inspectorPort: INSPECTOR_PORT, stdio: "inherit" });
  const forward = (signal: NodeJS.Signals) => void worker.stop(signal);
  process.on("SIGINT", forward);
  process.on("SIGTERM", forward);
  process.exitCode = await worker.exited;
  process.off("SIGINT", forward);
  process.off("SIGTERM", forward);
}

await main();
