import { defineConfig } from "vitest/config";

// Browser tests of the owner's dashboard (test-e2e/): Node runs them, driving Debian's Chromium against a real
// `wrangler dev` of the project. `npm run test:e2e`.
export default defineConfig({
  test: {
    include: ["test-e2e/**/*.e2e.ts"],
    globalSetup: ["./test-e2e/global-setup.ts"],
    fileParallelism: false,
    testTimeout: 60_000,
    hookTimeout: 120_000,
    reporters: ["default", "json"],
    outputFile: { json: "./test-artifacts/e2e-results.json" },
  },
});
