// The types openapi-typescript generates from openapi.json live in the partner SDK (sdk/src/partner-api.d.ts, written
// by `npm run openapi`); this name stays so that what imported them from here still compiles.
export type { $defs, components, operations, paths, webhooks } from "../../../sdk/src/partner-api";
