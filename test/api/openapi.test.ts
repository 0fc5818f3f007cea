import { encodeBase64 } from "@oslojs/encoding";
import { describe, expect, it } from "vitest";
import { SAMPLE_DATA } from "../../src/domain/webhooks/samples";
import { EVENT_NAMES } from "../../src/names-and-limits";
import { partnerApi } from "../../src/routes/api-v1";
import { EVENT_DATA } from "../../src/schemas/events";
import { call, json } from "../helpers/http";

type Operation = {
  operationId?: string;
  security?: unknown;
  parameters?: Array<{ name: string; in: string; required?: boolean }>;
  requestBody?: { content: Record<string, { schema: { $ref: string } }> };
  responses: Record<string, unknown>;
};
type Document = {
  openapi: string;
  servers: Array<{ url: string }>;
  paths: Record<string, Record<string, Operation>>;
  webhooks: Record<string, Record<string, Operation>>;
  components: {
    schemas: Record<string, { properties: Record<string, unknown>; required: string[] }>;
    securitySchemes: Record<string, unknown>;
  };
};

describe("the OpenAPI document and the reference page", async () => {
  const response = await call("/api/v1/openapi.json");
  const document = await json<Document>(response);
  // Sandbox creation is documented beside the sandbox operations, but served outside /api/v1 and without a credential.
  const { "/sandbox/businesses": sandboxCreation, ...partnerPaths } = document.paths;

  it("is served without a credential as OpenAPI 3.1", () => {
    expect(response.status).toBe(200);
    expect(document.openapi).toBe("3.1.0");
    expect(document.servers).toEqual([{ url: "http://localhost:8787/api/v1" }]);
  });

  it("lists every implemented partner route, each behind the bearer scheme", () => {
    const implemented = partnerApi.routes.map((route) => `${route.method.toLowerCase()} /api/v1${route.path}`);
    const documented = Object.entries(partnerPaths).flatMap(([path, methods]) =>
      Object.keys(methods).map((method) => `${method} /api/v1${path.replace(/\{(\w+)\}/g, ":$1")}`),
    );
    expect(new Set(documented)).toEqual(new Set(implemented));
    expect(documented.sort()).toEqual([
      "delete /api/v1/actions/:id",
      "delete /api/v1/app/webhooks/:id",
      "delete /api/v1/intakes/:id",
      "delete /api/v1/knowledge/:key",
      "delete /api/v1/mcp-servers/:id",
      "delete /api/v1/webhooks/:id",
      "get /api/v1/actions",
      "get /api/v1/actions/:id",
      "get /api/v1/app/connections",
      "get /api/v1/app/events",
      "get /api/v1/app/webhooks",
      "get /api/v1/app/webhooks/:id",
      "get /api/v1/app/webhooks/:id/deliveries",
      "get /api/v1/appointments",
      "get /api/v1/appointments/:id",
      "get /api/v1/events",
      "get /api/v1/events/:id",
      "get /api/v1/intakes",
      "get /api/v1/intakes/:id",
      "get /api/v1/intakes/:id/responses",
      "get /api/v1/knowledge",
      "get /api/v1/mcp-servers",
      "get /api/v1/mcp-servers/:id",
      "get /api/v1/me",
      "get /api/v1/orders",
      "get /api/v1/orders/:id",
      "get /api/v1/webhooks",
      "get /api/v1/webhooks/:id",
      "get /api/v1/webhooks/:id/deliveries",
      "patch /api/v1/actions/:id",
      "patch /api/v1/intakes/:id",
      "patch /api/v1/webhooks/:id",
      "post /api/v1/actions",
      "post /api/v1/actions/:id/rotate-secret",
      "post /api/v1/app/listen-sessions",
      "post /api/v1/app/webhooks",
      "post /api/v1/app/webhooks/:id/deliveries/:delivery_id/redeliver",
      "post /api/v1/app/webhooks/:id/enable",
      "post /api/v1/app/webhooks/:id/recover",
      "post /api/v1/intakes",
      "post /api/v1/listen-sessions",
      "post /api/v1/mcp-servers",
      "post /api/v1/mcp-servers/:id/refresh",
      "post /api/v1/sandbox/actions/:id/calls",
      "post /api/v1/sandbox/events",
      "post /api/v1/sandbox/intakes/:id/conversations",
      "post /api/v1/webhooks",
      "post /api/v1/webhooks/:id/deliveries/:delivery_id/redeliver",
      "post /api/v1/webhooks/:id/enable",
      "post /api/v1/webhooks/:id/recover",
      "post /api/v1/webhooks/:id/rotate-secret",
      "post /api/v1/webhooks/:id/test",
      "put /api/v1/knowledge/:key",
    ]);
    for (const methods of Object.values(partnerPaths)) {
      for (const operation of Object.values(methods)) expect(operation.security).toEqual([{ bearerAuth: [] }]);
    }
    expect(document.components.securitySchemes.bearerAuth).toMatchObject({ type: "http", scheme: "bearer" });
  });

  it("documents the query parameters and the objects (docs/guides/syncing.md, Booking and order objects)", () => {
    const names = (path: string) => document.paths[path]?.get?.parameters?.map((p) => `${p.in}:${p.name}`);
    expect(names("/appointments")).toEqual([
      "query:limit",
      "query:status",
      "query:since",
      "query:starting_after",
      "query:updated_since",
    ]);
    expect(names("/orders")).toEqual(["query:limit", "query:status", "query:starting_after", "query:updated_since"]);
    expect(Object.keys(document.components.schemas)).toEqual(
      expect.arrayContaining(["Business", "Booking", "Order", "Error"]),
    );
  });

  it("documents Idempotency-Key on every POST, and only there (docs/idempotency.md)", () => {
    const keyed = (operation: Operation) =>
      operation.parameters?.some((p) => p.in === "header" && p.name === "Idempotency-Key") ?? false;
    for (const [path, methods] of Object.entries(partnerPaths)) {
      // An app's own routes take no key yet (docs/idempotency.md).
      if (path.startsWith("/app/")) continue;
      for (const [method, operation] of Object.entries(methods)) {
        expect(keyed(operation)).toBe(method === "post");
        if (method !== "post") continue;
        const responses = operation.responses as Record<string, { headers?: Record<string, unknown> }>;
        expect(Object.keys(responses)).toEqual(expect.arrayContaining(["409", "422"]));
        for (const [status, answer] of Object.entries(responses)) {
          if (status.startsWith("2")) expect(Object.keys(answer.headers ?? {})).toContain("Idempotent-Replayed");
        }
      }
    }
  });

  it("documents sandbox creation (POST /api/sandbox/businesses) under its own server, without a credential", () => {
    const creation = sandboxCreation?.post as Operation & { servers: unknown; tags: string[] };
    expect(creation).toMatchObject({
      operationId: "createSandboxBusiness",
      security: [],
      servers: [{ url: "http://localhost:8787/api" }],
      tags: ["Sandbox"],
      requestBody: {
        content: { "application/json": { schema: { $ref: "#/components/schemas/CreateSandboxBusiness" } } },
      },
    });
    expect(Object.keys(creation.responses)).toEqual(["201", "400", "429"]);
    expect(document.components.schemas.CreatedSandboxBusiness?.required).toEqual(
      expect.arrayContaining(["business_id", "api_key", "owner_email", "owner_password", "dashboard_url"]),
    );
  });

  it("documents Ignored-Members on the successes of every operation with a JSON body (docs/errors.md)", () => {
    const operations = Object.values(document.paths).flatMap(Object.values);
    expect(operations.filter((operation) => operation.requestBody).length).toBeGreaterThan(15);
    for (const operation of operations) {
      const responses = operation.responses as Record<string, { headers?: Record<string, unknown> }>;
      for (const [status, answer] of Object.entries(responses)) {
        if (!status.startsWith("2")) continue;
        expect("Ignored-Members" in (answer.headers ?? {}), operation.operationId).toBe(Boolean(operation.requestBody));
      }
    }
  });

  it("marks every integer id `int64`, so that generators give it 64 bits (docs/openapi.md)", () => {
    const ID = /^(id|\w+_id|starting_after|ending_before)$/;
    const missing: string[] = [];
    let ids = 0;
    const check = (where: string, schema: { type?: unknown; format?: unknown } | undefined) => {
      if (schema?.type !== "integer") return;
      ids += 1;
      if (schema.format !== "int64") missing.push(where);
    };
    const walk = (node: unknown, where: string): void => {
      if (typeof node !== "object" || node === null) return;
      const object = node as Record<string, unknown> & { name?: string; in?: string; schema?: never };
      if (typeof object.name === "string" && typeof object.in === "string" && ID.test(object.name)) {
        check(`${where} (${object.in} parameter ${object.name})`, object.schema);
      }
      const properties = object.properties as Record<string, never> | undefined;
      if (typeof properties === "object" && properties !== null && !Array.isArray(properties)) {
        for (const [name, schema] of Object.entries(properties)) if (ID.test(name)) check(`${where}.${name}`, schema);
      }
      for (const [key, value] of Object.entries(object)) walk(value, `${where}/${key}`);
    };
    walk(document, "");
    expect(ids).toBeGreaterThan(30);
    expect(missing).toEqual([]);
  });

  it("names every operation, once: the verbs of a generated SDK (docs/decisions.md, The contract in a partner's tools)", () => {
    const operations = [...Object.values(document.paths), ...Object.values(document.webhooks)].flatMap(Object.values);
    const ids = operations.map((operation) => operation.operationId);
    expect(ids.every((id) => typeof id === "string" && /^[a-z][A-Za-z]+$/.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    expect(document.paths["/appointments"]?.get?.operationId).toBe("listAppointments");
    expect(document.paths["/webhooks"]?.post?.operationId).toBe("createWebhookEndpoint");
  });

  it("describes every event a webhook endpoint receives: its envelope, its data, the signature headers", () => {
    expect(Object.keys(document.webhooks)).toEqual([...EVENT_NAMES]);
    for (const [event, item] of Object.entries(document.webhooks)) {
      expect(Object.keys(item)).toEqual(["post"]);
      const post = item.post as Operation;
      expect(post.security).toEqual([]);
      expect(post.parameters?.map((p) => `${p.in}:${p.name}:${p.required}`)).toEqual(
        [
          "X-Service-Event",
          "X-Service-Delivery",
          "X-Service-Signature",
          "webhook-id",
          "webhook-timestamp",
          "webhook-signature",
        ].map((name) => `header:${name}:true`),
      );
      const ref = post.requestBody?.content["application/json"]?.schema.$ref ?? "";
      const envelope = document.components.schemas[ref.replace("#/components/schemas/", "")];
      expect(envelope?.required).toEqual(["id", "event", "created_at", "business", "data"]);
      expect(envelope?.properties.event).toEqual({ type: "string", enum: [event] });
      expect(envelope?.properties).toHaveProperty("test");
      expect(Object.keys(post.responses)).toEqual(["2XX", "default"]);
    }
  });

  it("describes each event's data with schemas its sample satisfies (src/domain/webhooks/samples.ts)", () => {
    for (const event of EVENT_NAMES) expect(EVENT_DATA[event].safeParse(SAMPLE_DATA[event]).error).toBeUndefined();
    // The other shape of booking.cancelled: a no-show (src/domain/platform/changes.ts).
    const { booking } = EVENT_DATA["booking.created"].parse(SAMPLE_DATA["booking.created"]);
    const noShow = { booking: { ...booking, status: "no_show" }, action: "no_show" };
    expect(EVENT_DATA["booking.cancelled"].safeParse({ ...noShow, reason: null }).success).toBe(true);
  });

  it("serves the interactive reference at /docs, reading this document with a script of this origin", async () => {
    const page = await call("/docs");
    await expect(page).toHaveStatus(200);
    expect(page.headers.get("Content-Type")).toContain("text/html");
    const html = await page.text();
    expect(html).toContain('data-url="/api/v1/openapi.json"');
    // One script runs, from this origin and pinned; the other element only carries the reference's settings.
    const tags = [...html.matchAll(/<script\b[^>]*>/g)].map(([tag]) => tag);
    expect(tags).toHaveLength(2);
    expect(tags[0]).toMatch(/^<script id="api-reference" type="application\/json" /);
    expect(tags[1]).toMatch(/^<script src="\/docs\/reference\.js" integrity="sha256-[A-Za-z0-9+/]{43}=">$/);
  });

  it("pins the reference's script: the file served is the one whose hash the page's CSP and integrity name", async () => {
    const page = await call("/docs");
    const integrity = /<script src="\/docs\/reference\.js" integrity="([^"]+)">/.exec(await page.text())?.[1];
    const script = await call("/docs/reference.js");
    await expect(script).toHaveStatus(200);
    expect(script.headers.get("Content-Type")).toMatch(/^text\/javascript/);
    const served = `sha256-${encodeBase64(new Uint8Array(await crypto.subtle.digest("SHA-256", await script.arrayBuffer())))}`;
    expect(integrity).toBe(served);
    expect(page.headers.get("Content-Security-Policy")).toContain(`script-src 'self' '${served}';`);
  });
});
