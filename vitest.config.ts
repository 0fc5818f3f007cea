import { availableParallelism } from "node:os";
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";

/**
 * Files whose tests read the whole database (the outbox sweep takes every business's due deliveries): each runs in
 * a runtime and storage of its own. Every other file shares one runtime per worker (`isolate: false`), which saves
 * the ~3 s each fresh workerd takes to start; their queries are scoped by the business each test creates.
 */
const WHOLE_DATABASE = [
  "test/webhooks/delivery.test.ts",
  "test/webhooks/outbox-faults.test.ts",
  "test/operations/retention-by-age.test.ts",
  "test/operations/retention-chunks.test.ts",
  "test/shards/cron.test.ts",
  "test/mcp/scheduled-refresh.test.ts",
  "test/shards/business-move.test.ts",
  "test/sandbox/cleanup.test.ts",
  "test/sandbox/live-cap.test.ts",
  "test/oauth/registration-ceiling.test.ts",
];

/** Tests of code that runs in Node, not in the Worker: the CLI, the webhooks guide's node:http receiver, the MCP servers. */
const NODE_TESTS = ["test/cli/**/*.test.ts", "test/sdk/node-receiver.test.ts", "test/mcp-servers.test.ts"];

// wrangler's information lines (each test runtime's "Using secrets defined in .dev.vars") would print once per
// runtime; its warnings and errors still print.
process.env.WRANGLER_LOG ??= "warn";

// Tests run inside workerd with the real bindings of wrangler.toml: local D1 (migrated by test/setup.ts), Durable
// Objects and Queues. Outbound calls go to the real HTTP receiver that test/global-setup.ts starts.
const workerd = cloudflareTest(async ({ inject }) => ({
  // Not workerd's --verbose (the pool's default), which prints every outbound fetch that fails to connect as an
  // uncaught exception even when the code catches it (the refused connection of test/webhooks/delivery.test.ts). A
  // rejection nobody handles still fails the run: vitest reports it, and test/setup.ts watches the Worker's errors.
  verbose: false,
  main: "./src/index.ts",
  wrangler: { configPath: "./wrangler.toml" },
  miniflare: {
    bindings: {
      TEST_MIGRATIONS: await readD1Migrations("./migrations"),
      RECEIVER_URL: inject("receiverUrl"),
      DOH_RESOLVER_URL: `${inject("receiverUrl")}/__dns`,
      MCP_SERVERS_URL: inject("mcpServersUrl"),
      BASE_URL: "http://localhost:8787",
      ALLOW_LOOPBACK_URLS: "true",
      LOCAL_DURABLE_OBJECT_JURISDICTIONS: "emulated",
      RUNTIME_TOKEN: "test-runtime-token-0123456789abcdef",
      OPERATOR_TOKEN: "test-operator-token-0123456789abcdef",
    },
  },
}));

export default defineConfig({
  // Vite's warnings are about dependencies' files (on a fresh clone, one per file of the stripe package whose source
  // map names sources it does not ship); its errors still print, and the tests' own output is the reporter's.
  logLevel: "error",
  test: {
    globalSetup: ["./test/global-setup.ts"],
    // One pool worker more than the cores: a worker is a workerd process whose tests wait on D1, timers and local
    // receivers a third of the time, so two workers left the two cores a quarter idle (measured: docs/toolchain.md).
    maxWorkers: availableParallelism() + 1,
    reporters: ["default", "json"],
    outputFile: { json: "./test-artifacts/vitest-results.json" },
    projects: [
      {
        extends: true,
        plugins: [workerd],
        test: {
          setupFiles: ["./test/setup.ts"],
          name: "shared-runtime",
          include: ["test/**/*.test.ts"],
          exclude: [...WHOLE_DATABASE, ...NODE_TESTS],
          isolate: false,
        },
      },
      {
        extends: true,
        plugins: [workerd],
        test: { setupFiles: ["./test/setup.ts"], name: "own-runtime", include: WHOLE_DATABASE, isolate: true },
      },
      // Node's own code (the CLI's command line) runs in Node, as partners run it, outside workerd.
      {
        extends: true,
        test: {
          name: "node",
          include: NODE_TESTS,
          environment: "node",
          setupFiles: ["./test/helpers/status-matcher.ts"],
        },
      },
    ],
  },
});
