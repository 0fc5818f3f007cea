/**
 * What the bundle keeps of zod's locales (wrangler.toml, `[alias]`): English, the only language of the API's
 * errors, which lib/zod-messages.ts phrases anyway. zod's namespace object otherwise carries its 40 locales (258 KiB
 * of the bundle's 905 before minifying) into the Worker, where nothing can call them.
 */
export { default as en } from "zod/v4/locales/en.js";
