// `npm run openapi`: writes openapi.json, the OpenAPI 3.1 document of /api/v1 as the Worker serves it at
// /api/v1/openapi.json, for the production BASE_URL of wrangler.toml, and the partner SDK's types generated from it by
// openapi-typescript (sdk/src/partner-api.d.ts, which the typed client example imports) (docs/openapi.md;
// docs/decisions.md, The contract in a partner's tools). The routes are loaded in Node by Vite's module runner (Vite comes with vitest),
// which resolves and compiles the TypeScript as the tests do; none of them imports a `cloudflare:` module.
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runnerImport } from "vite";
import { PROJECT_ROOT } from "./wrangler.ts";

const baseUrl = /^BASE_URL = "([^"]+)"$/m.exec(readFileSync(join(PROJECT_ROOT, "wrangler.toml"), "utf8"))?.[1];
if (!baseUrl) throw new Error("wrangler.toml no longer sets BASE_URL under [vars]: update scripts/openapi.ts.");

const { module } = await runnerImport<{ openApiDocument: (baseUrl: string) => object }>("/src/routes/api-docs.ts", {
  root: PROJECT_ROOT,
  configFile: false,
  logLevel: "error",
});
const path = join(PROJECT_ROOT, "openapi.json");
// In the generator's own (registration) order, then in the project's JSON format (biome, which `npm run lint` checks
// the file against), so that a change of the routes reads as a small diff.
writeFileSync(path, `${JSON.stringify(module.openApiDocument(baseUrl), null, 2)}\n`);
const biome = spawnSync(join(PROJECT_ROOT, "node_modules", ".bin", "biome"), ["format", "--write", path], {
  encoding: "utf8",
});
if (biome.status !== 0) throw new Error(`biome format failed:\n${biome.stdout}${biome.stderr}`);
console.log(`openapi.json written for ${baseUrl}.`);

// What a partner's generator makes of the document: the SDK (sdk/) is built on it, and test/api/typed-client.test.ts
// and test/sdk/ compile and run it.
const types = join(PROJECT_ROOT, "sdk", "src", "partner-api.d.ts");
const generated = spawnSync(join(PROJECT_ROOT, "node_modules", ".bin", "openapi-typescript"), [path, "-o", types], {
  encoding: "utf8",
});
if (generated.status !== 0) throw new Error(`openapi-typescript failed:\n${generated.stdout}${generated.stderr}`);
console.log("sdk/src/partner-api.d.ts generated from it.");
