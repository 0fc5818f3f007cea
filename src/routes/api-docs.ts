import { Hono } from "hono";
import type { AppEnv } from "../app-env";
import { FAVICON, setPageHeaders } from "../pages/page-shell";
import { partnerApi } from "./api-v1";
import { SANDBOX_CREATION_PATH } from "./sandbox-businesses";
import { serveStaticFile } from "./static-file";

/** The tags of the document, in the order the reference shows them, each with what it groups. */
const TAGS = [
  { name: "Business", description: "The business the credential belongs to" },
  { name: "Bookings and orders", description: "The business's appointments and orders, newest first" },
  { name: "Webhooks", description: "Webhook endpoints: subscribe, operate deliveries, rotate secrets" },
  {
    name: "Events",
    description: "What happened: listed by GET /events and delivered to webhook endpoints (the `webhooks` section)",
  },
  { name: "Knowledge", description: "Knowledge the assistant answers customers from" },
  { name: "Intakes", description: "Forms the assistant fills in with a customer, and their responses" },
  { name: "Connected actions", description: "Partner endpoints the assistant calls during a conversation" },
];

/**
 * What the reference says first: what the API is for, the guides (served from assets: src/routes/guides.ts), then
 * the promises a partner builds on, versioning (docs/versioning.md), errors (docs/errors.md) and rate limits
 * (docs/rate-limits.md), in their short form.
 */
const DESCRIPTION = `Read a business's details, appointments and orders; subscribe to webhooks; push knowledge; register connected actions and intakes.

## Guides
How to build an integration, step by step, from [Getting started](/docs/guides/getting-started) to webhooks, connected actions and intakes: [the guides](/docs/guides).

## Versioning
Every endpoint is under \`/api/v1\`, and within it changes are additive only: new endpoints, optional parameters, members in answers and events, event names and error codes. Ignore what you do not know. Nothing is removed, renamed or retyped, and no input accepted today is refused later. A breaking change comes as \`/api/v2\`, run beside \`/api/v1\` for at least 12 months; from its first day every \`/api/v1\` answer carries \`Deprecation\` (RFC 9745) and \`Sunset\` (RFC 8594) with the dates, and a \`Link\` with \`rel="deprecation"\` to the guide.

## Errors
Every error is \`{ "error", "code", "param"?, "request_id" }\`: a sentence for people, a stable \`code\` for programs (the table is under the \`Error\` schema), the input at fault, and the request id that the \`X-Request-Id\` header of every answer carries too.

## Rate limits
\`RateLimit-Policy\` and \`RateLimit\` (draft-ietf-httpapi-ratelimit-headers-10) name each policy an answer was counted against: \`"requests";q=600;w=60\` per credential on every answer, and \`"knowledge_pushes";q=120;w=3600\` per business on knowledge pushes. A 429 has \`Retry-After\`.`;

/**
 * The OpenAPI 3.1 document of `/api/v1`, generated from the routes' zod schemas (and the events' for its `webhooks`).
 * openapi.json at the repository root is this document for the production BASE_URL (`npm run openapi`, docs/openapi.md).
 */
export function openApiDocument(baseUrl: string) {
  const document = partnerApi.getOpenAPI31Document({
    openapi: "3.1.0",
    info: {
      title: "Secretary Partner API",
      version: "1.0.0",
      description: DESCRIPTION,
      license: LICENSE,
    },
    servers: [{ url: `${baseUrl}/api/v1` }],
    tags: TAGS,
  });
  const creation = document.paths?.[SANDBOX_CREATION_PATH]?.post;
  if (creation) creation.servers = [{ url: `${baseUrl}/api` }];
  return document;
}

/**
 * Not open source: a commercial API used under the partner terms. Named so, rather than left out, because generators
 * and catalogues read this member (and Redocly's recommended rules ask for it). `identifier` is OpenAPI 3.1's SPDX
 * member (SPDX's form for a licence of one's own, `LicenseRef-`), which the generator's 3.0-shaped type lacks: a
 * constant, not a literal, passes it through.
 */
const LICENSE = { name: "Proprietary: used under the Secretary partner terms", identifier: "LicenseRef-Proprietary" };

let documentJson: { baseUrl: string; body: string } | undefined;

/** The document as served: generated once per isolate, not per request. */
function servedDocument(baseUrl: string): string {
  if (documentJson?.baseUrl !== baseUrl) documentJson = { baseUrl, body: JSON.stringify(openApiDocument(baseUrl)) };
  return documentJson.body;
}

/**
 * The interactive reference: Scalar's standalone bundle, byte for byte the file dist/browser/standalone.js of the npm
 * package @scalar/api-reference 1.72.1, kept in assets/docs/reference.js and served from this origin, so that the page
 * works offline and no other origin's script runs where an owner is signed in (docs/architecture.md, Pages). It is
 * 4.35 MB: a static asset, outside the Worker's bundle (docs/decisions.md, OpenAPI and the reference page, says how to
 * update it).
 */
const REFERENCE_SCRIPT = "/docs/reference.js";

/**
 * Its SHA-256, which pins it: the `integrity` attribute makes every browser refuse other bytes (Subresource
 * Integrity). The CSP names it beside 'self', since not every browser matches an external script by its hash alone
 * (CSP 3); 'self' admits no other script, as every other answer of this origin is sent with `nosniff` and a type that
 * is not JavaScript. A test checks the hash against the file served.
 */
const REFERENCE_SCRIPT_HASH = "sha256-vwkQBr3Dr2Bnr3fC9TSBLj5jPpSpTocTgGn1cPM7diw=";

/**
 * What the reference needs besides its script, from this origin only: the document (connect-src), the styles it
 * injects at run time (no nonce or hash can be known for them beforehand), and its inline SVG icons (data:).
 */
const REFERENCE_POLICY = {
  "script-src": `'self' '${REFERENCE_SCRIPT_HASH}'`,
  "style-src": "'unsafe-inline'",
  "img-src": "'self' data:",
  "connect-src": "'self'",
  "form-action": "'none'",
};

/**
 * Scalar's features that reach its own services are off: the default web fonts (from its font host), the AI agent,
 * and the MCP, developer tools and "Open API Client" link (which hand the document to Scalar's cloud). The CSP would
 * block the loads anyway; switched off, the page neither tries nor offers them.
 */
const REFERENCE_CONFIGURATION = JSON.stringify({
  withDefaultFonts: false,
  agent: { disabled: true },
  mcp: { disabled: true },
  showDeveloperTools: "never",
  hideClientButton: true,
});

/** The `application/json` element only carries the settings: a script of that type is never run, so CSP need not allow it. */
const REFERENCE_PAGE = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>Secretary Partner API reference</title>
    <link rel="icon" href="${FAVICON}" type="image/svg+xml" />
  </head>
  <body>
    <script id="api-reference" type="application/json" data-url="/api/v1/openapi.json" data-configuration='${REFERENCE_CONFIGURATION}'></script>
    <script src="${REFERENCE_SCRIPT}" integrity="${REFERENCE_SCRIPT_HASH}"></script>
  </body>
</html>`;

/** Public, without a credential: registered before `/api/v1`'s authentication so that it never runs for these. */
export const apiDocs = new Hono<AppEnv>()
  .get("/api/v1/openapi.json", (c) => {
    c.header("Content-Type", "application/json; charset=utf-8");
    c.header("Cache-Control", "public, max-age=300");
    return c.body(servedDocument(c.env.BASE_URL));
  })
  .get("/docs", (c) => {
    setPageHeaders(c, REFERENCE_POLICY);
    return c.html(REFERENCE_PAGE);
  })
  .get(REFERENCE_SCRIPT, serveStaticFile);
