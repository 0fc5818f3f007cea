import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-pool-workers";
import { defineConfig } from "vitest/config";

// Tests run inside workerd with the real bindings of wrangler.toml: local D1 (migrated by test/setup.ts), Durable
// Objects and Queues. Outbound calls go to the real HTTP receiver that test/global-setup.ts starts.
export default defineConfig({
  plugins: [
    cloudflareTest(async ({ inject }) => ({
      main: "./src/index.ts",
      wrangler: { configPath: "./wrangler.toml" },
      miniflare: {
        bindings: {
          TEST_MIGRATIONS: await readD1Migrations("./migrations"),
          RECEIVER_URL: inject("receiverUrl"),
          DOH_RESOLVER_URL: `${inject("receiverUrl")}/__dns`,
          BASE_URL: "http://localhost:8787",
          ALLOW_LOOPBACK_URLS: "true",
          RUNTIME_TOKEN: "test-runtime-token-0123456789abcdef",
        },
      },
    })),
  ],
  test: {
    globalSetup: ["./test/global-setup.ts"],
    setupFiles: ["./test/setup.ts"],
    include: ["test/**/*.test.ts"],
    reporters: ["default", "json"],
    outputFile: { json: "./test-artifacts/vitest-results.json" },
  },
});
