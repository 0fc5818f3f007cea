import { describe, expect, it } from "vitest";
import document from "../../openapi.json";
import { API_KEY_PREFIX } from "../../src/domain/access/principals";
import { randomToken } from "../../src/lib/secrets";
import { partnerApi } from "../../src/routes/api-v1";
import { createApiKey, createBusiness } from "../helpers/fixtures";
import { call, expectError, expectMissingCredential, json } from "../helpers/http";
import { APP_ROUTES, businessFor, ROUTES, realPath } from "../helpers/partner-routes";

// A missing, malformed or revoked credential is a 401, and a business not on an active Pro or Business plan gets 403
// (docs/guides/getting-started.md, A credential), on every partner route under /api/v1.
// The OpenAPI document and /docs are public and are not partner routes.

describe("authentication and the plan rule on every partner route", async () => {
  const lapsed = await createBusiness({ plan: "pro", active: false });
  const free = await createBusiness({ plan: "free", active: true });

  it.each(ROUTES)("%s %s: 401 without a valid key, 403 on a lapsed or free plan", async (method, path, ok, body) => {
    // A business of its own per route, so that a route's record (and a DELETE of it) touches no other row.
    const { business, apiKey, shard } = await businessFor(path);
    const revoked = await createApiKey(business.id, { revoked: true, shard });
    const url = await realPath(path, apiKey);
    const send = (headers: Record<string, string> = {}, key?: string) => call(url, { method, body, headers, key });

    await expectMissingCredential(await send());
    await expectError(await send({ Authorization: "Bearer sk_live_a,b" }), 401, /malformed/);
    await expectError(await send({}, randomToken(API_KEY_PREFIX)), 401, /not recognised/);
    await expectError(await send({}, revoked.apiKey), 401, /revoked/);
    await expectError(await send({}, lapsed.apiKey), 403, /lapsed/);
    await expectError(await send({}, free.apiKey), 403, /does not include the API/);

    // The same request with the business's own key succeeds: the refusals above came from the credential alone.
    const answered = await send({}, apiKey);
    await expect(answered).toHaveStatus(ok);
  });

  // The routes that take a path parameter or a query (as the document declares them), each sent one that names
  // nothing or is out of range.
  const takesQuery = (path: string) =>
    Object.values(document.paths[path as keyof typeof document.paths]).some((operation) =>
      ("parameters" in operation ? (operation.parameters as { in: string }[]) : []).some((p) => p.in === "query"),
    );
  const CHECKED = ROUTES.filter(([, path]) => path.includes("{") || takesQuery(path));
  it.each(CHECKED)(
    "%s %s: a refused credential is answered before the request's own 400 or 404",
    async (method, path) => {
      const { business, apiKey, shard } = await businessFor(path);
      const revoked = await createApiKey(business.id, { revoked: true, shard });
      const url = await realPath(path, apiKey);
      // A query parameter that no route accepts as it is, and an id or key that names nothing.
      const wrong = `${url
        .replace(/\/\d+(?=\/|$)/, "/999999999")
        .replace(/partner-auth-hours/, "nothing-here")
        .replace(/\/evt_[\w-]+/, "/evt_nothing")}?limit=0`;
      const body = method === "GET" || method === "DELETE" ? undefined : { title: "" };
      await expectError(await call(wrong, { method, body, key: revoked.apiKey }), 401, /revoked/);
      await expectError(await call(wrong, { method, body, key: lapsed.apiKey }), 403, /lapsed/);
      // With the business's own key, the same request is refused for what it is.
      expect([400, 404]).toContain((await call(wrong, { method, body, key: apiKey })).status);
    },
  );

  it("has a row for every route of the OpenAPI document and of the router", async () => {
    const response = await call("/api/v1/openapi.json");
    await expect(response).toHaveStatus(200);
    const document = await json<{ paths: Record<string, Record<string, unknown>> }>(response);
    // Sandbox creation is documented too, but served outside /api/v1, without a credential.
    const { "/sandbox/businesses": _creation, ...paths } = document.paths;
    const documented = Object.entries(paths).flatMap(([path, operations]) =>
      Object.keys(operations).map((method) => `${method.toUpperCase()} ${path}`),
    );
    // A route added without partnerRoute() is missing from the document, but not from the router.
    const routed = partnerApi.routes
      .filter((route) => route.method !== "ALL")
      .map((route) => `${route.method.toUpperCase()} ${route.path.replace(/:(\w+)/g, "{$1}")}`);
    const table = [...ROUTES, ...APP_ROUTES].map(([method, path]) => `${method} ${path}`);

    expect(new Set(table).size).toBe(table.length);
    expect([...table].sort()).toEqual([...new Set(documented)].sort());
    expect([...table].sort()).toEqual([...new Set(routed)].sort());
  });
});
