// `npm start` (README.md, Two commands): migrates every local D1 database and seeds the demo businesses, each in the
// shard of its country (scripts/seed.ts), prints their credentials and where each lives, then runs `wrangler dev`
// offline in the foreground (scripts/local-worker.ts) until it exits or is stopped; Ctrl-C or a SIGTERM stops
// wrangler and the workerd it started. `PORT=8790 npm start` listens elsewhere (the base URL follows it).
import { startLocalWorker } from "./local-worker.ts";
import { type SeedResult, seedDemo } from "./seed.ts";

const DEFAULT_PORT = 8787;
/** wrangler's own default, where a debugger looks first; on another port, a free one (another `npm start` has 9229). */
const INSPECTOR_PORT = 9229;

function readPort(): number {
  const port = Number(process.env.PORT ?? DEFAULT_PORT);
  if (!Number.isInteger(port) || port < 1 || port > 65_535) throw new Error(`PORT=${process.env.PORT} is not a port.`);
  return port;
}

function credentialsBlock(seeded: SeedResult[], baseUrl: string, port: number): string {
  const [first] = seeded;
  const lines = [
    "",
    "Local demo businesses, each in the shard of its country (docs/scaling.md, Regional shards)",
    `  Base URL        ${baseUrl}`,
    `  Runtime token   ${first?.runtime_token ?? ""}`,
    ...seeded.flatMap((business) => [
      "",
      `  ${business.handle}: shard ${business.shard}, ${business.region}`,
      `    Business id   ${business.business_id}`,
      `    API key       ${business.api_key}`,
      `    Owner         ${business.owner_email} / ${business.owner_password}`,
    ]),
    "",
    "Try it:",
    ...seeded.map(
      (business) =>
        `  curl -H "Authorization: Bearer ${business.api_key}" http://localhost:${port}/api/v1/me   # ${business.shard}`,
    ),
    "",
  ];
  return `${lines.join("\n")}\n`;
}

async function main() {
  let port: number;
  let seeded: SeedResult[];
  try {
    port = readPort();
    seeded = await seedDemo();
  } catch (error) {
    process.stderr.write(`Seeding failed: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
    return;
  }
  const own = port !== DEFAULT_PORT;
  const baseUrl = own ? `http://localhost:${port}` : (seeded[0]?.base_url ?? `http://localhost:${port}`);
  process.stdout.write(credentialsBlock(seeded, baseUrl, port));

  const worker = await startLocalWorker({
    port,
    inspectorPort: own ? undefined : INSPECTOR_PORT,
    vars: own ? { BASE_URL: baseUrl } : undefined,
    stdio: "inherit",
  });
  const forward = (signal: NodeJS.Signals) => void worker.stop(signal);
  process.on("SIGINT", forward);
  process.on("SIGTERM", forward);
  process.exitCode = await worker.exited;
  process.off("SIGINT", forward);
  process.off("SIGTERM", forward);
}

await main();
