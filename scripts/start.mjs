// `npm start` (README.md, Two commands): migrates and seeds the local D1 (scripts/seed.mjs), prints the demo
// credentials, then runs `wrangler dev` offline in the foreground until it exits or is stopped.
import { constants } from "node:os";
import { seed } from "./seed.mjs";
import { persistArgs, spawnWranglerInherited } from "./wrangler.mjs";

const PORT = 8787;
const HOST = "127.0.0.1";

/** @param {import("./seed.mjs").SeedResult} credentials */
function credentialsBlock(credentials) {
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
  /** @type {import("./seed.mjs").SeedResult} */
  let credentials;
  try {
    credentials = await seed();
  } catch (error) {
    process.stderr.write(`Seeding failed: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
    return;
  }
  process.stdout.write(credentialsBlock(credentials));

  const child = spawnWranglerInherited(["dev", "--port", String(PORT), "--ip", HOST, ...persistArgs()]);

  /** @param {NodeJS.Signals} signal */
  const forward = (signal) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
  };
  process.on("SIGINT", forward);
  process.on("SIGTERM", forward);

  child.on("error", (error) => {
    process.stderr.write(`Could not start wrangler: ${error.message}\n`);
    process.exitCode = 1;
  });
  child.on("exit", (code, signal) => {
    process.off("SIGINT", forward);
    process.off("SIGTERM", forward);
    process.exitCode = code ?? (signal ? 128 + (constants.signals[signal] ?? 0) : 1);
  });
}

await main();
