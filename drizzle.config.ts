import { defineConfig } from "drizzle-kit";

// Generates SQL migrations from the TypeScript schema, offline: `npm run db:generate`.
export default defineConfig({
  dialect: "sqlite",
  schema: "./src/db/schema/index.ts",
  out: "./migrations",
});
