/**
 * The sources a Content-Security-Policy names that are neither a keyword ('self', 'none', 'unsafe-inline', a hash)
 * nor `data:`: hosts and schemes, which let another origin in. A policy that names no other origin has none.
 */
export const otherOriginSources = (csp: string): string[] =>
  csp
    .split(";")
    .flatMap((directive) => directive.trim().split(/\s+/).slice(1))
    .filter((source) => source.match(/^'[^']+'$/) === null && source !== "data:");
