import { defineConfig } from "vitest/config";

// Browser tests of the owner's dashboard (test-e2e/): Node runs them, driving Debian's Chromium against a real
// `wrangler dev` of the project. `npm run test:e2e`.
//
// The files run side by side, each in a process of its own with its own port and local state
// (test-e2e/local-worker.ts), four at once: each runs a workerd and a Chromium, and on two cores four finished a
// little before three and two (docs/toolchain.md, Browser tests). The timeouts allow for that shared load.
const MAX_FILES = 4;

export default defineConfig({
  test: {
    include: ["test-e2e/**/*.e2e.ts"],
    globalSetup: ["./test-e2e/global-setup.ts"],
    pool: "forks",
    isolate: true,
    fileParallelism: true,
    maxWorkers: MAX_FILES,
    testTimeout: 90_000,
    hookTimeout: 180_000,
    teardownTimeout: 30_000,
    reporters: ["default", "json"],
    outputFile: { json: "./test-artifacts/e2e-results.json" },
  },
});
