import { Hono } from "hono";
import type { AppEnv } from "../app-env";
import { partnerApi } from "./partner-api";

let documentJson: { baseUrl: string; body: string } | undefined;

/** The OpenAPI 3.1 document of `/api/v1`, generated from the routes' zod schemas once per isolate, not per request. */
function openApiDocument(baseUrl: string): string {
  if (documentJson?.baseUrl !== baseUrl) {
    const document = partnerApi.getOpenAPI31Document({
      openapi: "3.1.0",
      info: {
        title: "Secretary Partner API",
        version: "1.0.0",
        description:
          "Read a business's details, appointments and orders; subscribe to webhooks; push knowledge; register connected actions and intakes. Additive only within /api/v1.",
      },
      servers: [{ url: `${baseUrl}/api/v1` }],
    });
    documentJson = { baseUrl, body: JSON.stringify(document) };
  }
  return documentJson.body;
}

/**
 * The interactive reference is Scalar's standalone bundle, pinned, reading the document above. (Its Hono wrapper,
 * @scalar/hono-api-reference, renders this same page but requires Node 22 to install: docs/decisions.md.)
 */
const REFERENCE_PAGE = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>Secretary Partner API reference</title>
  </head>
  <body>
    <script id="api-reference" data-url="/api/v1/openapi.json"></script>
    <script src="https://cdn.jsdelivr.net/npm/@scalar/api-reference@1.72.1"></script>
  </body>
</html>`;

/** Public, without a credential: registered before `/api/v1`'s authentication so that it never runs for these. */
export const apiDocs = new Hono<AppEnv>()
  .get("/api/v1/openapi.json", (c) => {
    c.header("Content-Type", "application/json; charset=utf-8");
    c.header("Cache-Control", "public, max-age=300");
    return c.body(openApiDocument(c.env.BASE_URL));
  })
  .get("/docs", (c) => c.html(REFERENCE_PAGE));
