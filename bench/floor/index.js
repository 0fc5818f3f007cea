// The floor of `npm run bench` (scripts/bench.mjs): the four read paths of the partner API with nothing but what
// they cannot do without, so that the app's figures read against the least a Worker on the same local D1 costs.
// Per request: the SHA-256 of the bearer key (crypto.subtle), then ONE D1 round trip, a batch of the credential
// lookup (api_keys by its unique key_hash index, joined with businesses) and the data query, which is scoped by a
// sub-select on the same hash so that it need not wait for the lookup; then the credential's rate limit, as the app
// spends it (wrangler.toml says why the floor has the app's bindings). Raw rows out as JSON: no framework, no
// validation or mapping, no headers beyond Content-Type. Plain JavaScript with no dependencies, so that wrangler
// bundles nothing but this file.

const CREDENTIAL = `SELECT k.revoked_at AS key_revoked_at, b.*
FROM api_keys k JOIN businesses b ON b.id = k.business_id
WHERE k.key_hash = ?1`;

/** The business of an unrevoked key: a revoked or unknown key scopes the data query to nothing. */
const BUSINESS_OF_KEY = "(SELECT business_id FROM api_keys WHERE key_hash = ?1 AND revoked_at IS NULL)";

/**
 * The data query of each path, in the app's order (src/domain/platform, src/domain/knowledge); `paged` ones take the
 * page size as ?2. /me has none: its answer is the business row the lookup already read.
 * @type {Record<string, { sql: string, paged: boolean } | null>}
 */
const ROUTES = {
  "/api/v1/me": null,
  "/api/v1/appointments": {
    sql: `SELECT * FROM bookings WHERE business_id = ${BUSINESS_OF_KEY} ORDER BY date DESC, time DESC, id DESC LIMIT ?2`,
    paged: true,
  },
  "/api/v1/orders": {
    sql: `SELECT * FROM orders WHERE business_id = ${BUSINESS_OF_KEY} ORDER BY created_at DESC, id DESC LIMIT ?2`,
    paged: true,
  },
  // The app lists knowledge without its content: the same columns here.
  "/api/v1/knowledge": {
    sql: `SELECT key, title, chars, updated_at, created_at FROM knowledge_items WHERE business_id = ${BUSINESS_OF_KEY}
ORDER BY key`,
    paged: false,
  },
};

/** The plans whose businesses may use the API (spec: the API requires Pro or Business, and an active plan). */
const API_PLANS = ["pro", "business"];

/**
 * @param {unknown} body
 * @param {number} [status]
 */
const json = (body, status = 200) =>
  new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/json" } });

/** @param {string} text */
async function sha256Hex(text) {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)));
  return Array.from(digest, (byte) => byte.toString(16).padStart(2, "0")).join("");
}

/** The app's page size rule: 1 to 100, 25 when absent (a wrong value is the app's 400; here it is clamped). */
const pageSize = (/** @type {string | null} */ value) => Math.min(100, Math.max(1, Number(value) || 25));

/**
 * The floor's answer to one request: the key's hash, one D1 batch, the rate limit, the raw rows.
 * @param {Request} request
 * @param {{ DB: D1Database, RATE_LIMIT: RateLimit }} env
 */
async function answer(request, env) {
  const url = new URL(request.url);
  // What scripts/local-worker.mjs waits for before the run.
  if (url.pathname === "/") return new Response("The floor Worker of npm run bench.\n");
  const route = ROUTES[url.pathname];
  if (route === undefined || request.method !== "GET") return json({ error: "Not found." }, 404);
  const key = /^Bearer +(\S+)$/i.exec(request.headers.get("Authorization")?.trim() ?? "")?.[1];
  if (!key) return json({ error: "An API key is required." }, 401);

  const hash = await sha256Hex(key);
  const statements = [env.DB.prepare(CREDENTIAL).bind(hash)];
  if (route) {
    const data = env.DB.prepare(route.sql);
    statements.push(route.paged ? data.bind(hash, pageSize(url.searchParams.get("limit"))) : data.bind(hash));
  }
  const [credential, data] = /** @type {D1Result<Record<string, unknown>>[]} */ (await env.DB.batch(statements));

  const row = credential?.results[0];
  if (!row || row.key_revoked_at) return json({ error: "The API key is not recognised." }, 401);
  const { key_revoked_at: _, ...business } = row;
  if (!API_PLANS.includes(String(business.plan)) || !business.plan_active) {
    return json({ error: "The business's plan does not include the API." }, 403);
  }
  if (!(await env.RATE_LIMIT.limit({ key: hash })).success) return json({ error: "Too many requests." }, 429);
  return route ? json({ data: data?.results ?? [] }) : json(business);
}

export default {
  /**
   * One JSON line a request, as the app writes (src/lib/log.ts, DESIGN.md, Operations: Logs): every production Worker
   * logs its requests, and locally each line travels through wrangler dev's output, which costs the local stack more
   * CPU than writing it (docs/performance.md); the floor pays it as the app does.
   * @param {Request} request
   * @param {{ DB: D1Database, RATE_LIMIT: RateLimit }} env
   */
  async fetch(request, env) {
    const startedAt = Date.now();
    const response = await answer(request, env);
    console.log(
      JSON.stringify({
        level: "info",
        kind: "request",
        requestId: crypto.randomUUID(),
        method: request.method,
        route: new URL(request.url).pathname,
        principal: "api_key",
        principalId: null,
        status: response.status,
        durationMs: Date.now() - startedAt,
        d1RoundTrips: 1,
      }),
    );
    return response;
  },
};
