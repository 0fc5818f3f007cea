// The floor of `npm run bench` (scripts/bench.ts, bench/README.md): what the app does with nothing but what it cannot
// do without, so that the app's figures read against the least a Worker on the same local platform costs. Plain
// JavaScript with no dependencies, so that wrangler bundles nothing but this file.
// - The four read paths of the partner API: per request, the SHA-256 of the bearer key (crypto.subtle), then ONE D1
//   round trip, a batch of the credential lookup (api_keys by its unique key_hash index, joined with businesses) and
//   the data query, which is scoped by a sub-select on the same hash so that it need not wait for the lookup; then the
//   credential's rate limit, as the app spends it (wrangler.toml says why the floor has the app's bindings). Raw rows
//   out as JSON: no framework, no validation or mapping, no headers beyond Content-Type.
// - Webhook deliveries of booking.created: a report is ONE D1 round trip (the event and one delivery row per
//   subscribed endpoint) and one sendBatch of the delivery ids; the consumer claims a whole queue batch in ONE
//   statement, signs and POSTs each delivery, and records every outcome in ONE D1 batch.

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

/** The plans whose businesses may use the API, when active (docs/guides/getting-started.md, A credential). */
const API_PLANS = ["pro", "business"];

/** The one event the bench reports, and what its deliveries' endpoints subscribe to (or to every event, `*`). */
const EVENT = "booking.created";

/**
 * The event, its envelope built from the business's row (`id`, `event`, `created_at`, `business`, `data`, as
 * docs/webhooks.md, The request has it); nothing when the business is unknown.
 */
const EVENT_INSERT = `INSERT INTO events (id, business_id, type, envelope, created_at)
SELECT ?1, id, '${EVENT}', json_object('id', ?1, 'event', '${EVENT}', 'created_at', ?2,
  'business', json_object('id', id, 'handle', handle, 'name', name), 'data', json_object('booking', json(?3))), ?2
FROM businesses WHERE id = ?4
RETURNING id`;

/** One pending delivery per enabled endpoint of the business subscribed to the event. */
const DELIVERIES_INSERT = `INSERT INTO webhook_deliveries (business_id, event_id, endpoint_id, status, next_attempt_at,
  created_at)
SELECT business_id, ?1, id, 'pending', ?2, ?2 FROM webhook_endpoints
WHERE business_id = ?3 AND status = 'enabled' AND EXISTS (SELECT 1 FROM json_each(events) WHERE value IN ('${EVENT}', '*'))
RETURNING id`;

/**
 * The claim of a whole queue batch, ids bound as one JSON array (D1 binds at most 100 parameters): a lease on each
 * pending delivery that no other consumer holds, so that a duplicate message sends nothing, and with it what to send.
 */
const CLAIM = `UPDATE webhook_deliveries SET attempt_count = attempt_count + 1, lease_until = ?2
WHERE id IN (SELECT value FROM json_each(?1)) AND status = 'pending' AND (lease_until IS NULL OR lease_until <= ?3)
RETURNING id, event_id,
  (SELECT url FROM webhook_endpoints e WHERE e.id = endpoint_id) AS url,
  (SELECT secret FROM webhook_endpoints e WHERE e.id = endpoint_id) AS secret,
  (SELECT envelope FROM events v WHERE v.id = event_id) AS envelope`;

/** Every attempt's row, from one JSON array of outcomes. */
const ATTEMPTS_INSERT = `INSERT INTO delivery_attempts (delivery_id, attempted_at, status_code, error, duration_ms)
SELECT value ->> 'id', value ->> 'at', value ->> 'status', value ->> 'error', value ->> 'ms' FROM json_each(?1)`;

/** Each delivery after its attempt: delivered, or pending again after the schedule's first delay, its lease given back. */
const DELIVERIES_MOVED_ON = `UPDATE webhook_deliveries SET lease_until = NULL,
  status = iif(o.value ->> 'ok', 'delivered', 'pending'),
  completed_at = iif(o.value ->> 'ok', o.value ->> 'done', NULL),
  next_attempt_at = iif(o.value ->> 'ok', next_attempt_at, o.value ->> 'retry')
FROM json_each(?1) o WHERE webhook_deliveries.id = o.value ->> 'id'`;

/** The answer time a receiver has (docs/webhooks.md, The request), and the first delay of the retry schedule. */
const ANSWER_TIMEOUT_MS = 10_000;
const RETRY_DELAY_SECONDS = 60;
/** The outbound connections an invocation may wait on at once in production (the app's src/lib/connection-slots.ts). */
const OPEN_CONNECTIONS = 6;
/** A crashed attempt frees its delivery after this: longer than the answer time plus the record. */
const LEASE_MS = 30_000;

/**
 * @param {unknown} body
 * @param {number} [status]
 */
const json = (body, status = 200) =>
  new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/json" } });

const encoder = new TextEncoder();
const hex = (/** @type {Uint8Array} */ bytes) =>
  Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("");

/** @param {string} text */
const sha256Hex = async (text) => hex(new Uint8Array(await crypto.subtle.digest("SHA-256", encoder.encode(text))));

/**
 * HMAC-SHA256 (RFC 2104) by the platform's Web Crypto.
 * @param {Uint8Array} key
 * @param {string} data
 */
async function hmac(key, data) {
  const imported = await crypto.subtle.importKey("raw", key, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return new Uint8Array(await crypto.subtle.sign("HMAC", imported, encoder.encode(data)));
}

/** The token of `Authorization: Bearer <token>`, or undefined. */
const bearer = (/** @type {Request} */ request) =>
  /^Bearer +(\S+)$/i.exec(request.headers.get("Authorization")?.trim() ?? "")?.[1];

/** The app's page size rule: 1 to 100, 25 when absent (a wrong value is the app's 400; here it is clamped). */
const pageSize = (/** @type {string | null} */ value) => Math.min(100, Math.max(1, Number(value) || 25));

/**
 * One read: the key's hash, one D1 batch, the rate limit, the raw rows.
 * @param {URL} url
 * @param {Request} request
 * @param {Env} env
 */
async function read(url, request, env) {
  const route = ROUTES[url.pathname];
  if (route === undefined || request.method !== "GET") return json({ error: "Not found." }, 404);
  const key = bearer(request);
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

/**
 * A report of a new booking (`{ booking }`, the app's body) by the runtime's token: the event and its deliveries in
 * ONE D1 batch, then their ids on the queue after the answer, as the app enqueues them.
 * @param {string} businessId
 * @param {Request} request
 * @param {Env} env
 * @param {ExecutionContext} ctx
 */
async function report(businessId, request, env, ctx) {
  const token = encoder.encode(bearer(request) ?? "");
  const expected = encoder.encode(env.RUNTIME_TOKEN ?? "");
  // Compared in constant time, as the app compares the runtime's token.
  if (
    !expected.byteLength ||
    token.byteLength !== expected.byteLength ||
    !crypto.subtle.timingSafeEqual(token, expected)
  ) {
    return json({ error: "The runtime token is not recognised." }, 401);
  }
  /** @type {{ booking?: unknown } | null} */
  const body = await request.json().catch(() => null);
  if (typeof body?.booking !== "object" || body.booking === null) {
    return json({ error: 'The request body must carry a "booking" object.' }, 400);
  }
  const eventId = `evt_${crypto.randomUUID().replaceAll("-", "")}`;
  const now = new Date().toISOString();
  const [event, deliveries] = /** @type {D1Result<{ id: number | string }>[]} */ (
    await env.DB.batch([
      env.DB.prepare(EVENT_INSERT).bind(eventId, now, JSON.stringify(body.booking), businessId),
      env.DB.prepare(DELIVERIES_INSERT).bind(eventId, now, businessId),
    ])
  );
  if (!event?.results.length) return json({ error: "The business is not known." }, 404);
  const messages = (deliveries?.results ?? []).map(({ id }) => ({ body: { deliveryId: Number(id) } }));
  if (messages.length > 0) ctx.waitUntil(env.WEBHOOK_DELIVERIES.sendBatch(messages));
  return json({ events: [{ id: eventId, event: EVENT }] }, 201);
}

/**
 * One delivery's signed request: the app's headers (docs/webhooks.md, The request; The signatures), the
 * `X-Service-Signature` HMAC keyed by the secret's text and the Standard Webhooks one by the bytes its base64 after
 * `whsec_` encodes. Signed before it waits for a connection, as the app signs.
 * @param {Claimed} delivery
 */
async function signed({ id, event_id: eventId, url, secret, envelope }) {
  const t = Math.floor(Date.now() / 1000);
  const [stripe, standard] = await Promise.all([
    hmac(encoder.encode(secret), `${t}.${envelope}`),
    hmac(
      Uint8Array.from(atob(secret.slice("whsec_".length)), (c) => c.charCodeAt(0)),
      `${eventId}.${t}.${envelope}`,
    ),
  ]);
  /** @type {Record<string, string>} */
  const headers = {
    "Content-Type": "application/json",
    "User-Agent": "Secretary-Webhooks/1.0 (+https://partners.secretary.example)",
    "X-Service-Event": EVENT,
    "X-Service-Delivery": String(id),
    "X-Service-Signature": `t=${t},v1=${hex(stripe)}`,
    "webhook-id": eventId,
    "webhook-timestamp": String(t),
    "webhook-signature": `v1,${btoa(String.fromCharCode(...standard))}`,
  };
  return { id, url, headers, envelope };
}

/**
 * One signed POST, the answer dropped unread, its timeout started when it is sent. Answers its outcome as the record
 * binds it.
 * @param {Awaited<ReturnType<typeof signed>>} request
 */
async function post({ id, url, headers, envelope }) {
  const startedAt = Date.now();
  /** @type {number | null} */
  let status = null;
  /** @type {string | null} */
  let error = null;
  try {
    const response = await fetch(url, {
      method: "POST",
      headers,
      body: envelope,
      redirect: "manual",
      signal: AbortSignal.timeout(ANSWER_TIMEOUT_MS),
    });
    await response.body?.cancel();
    status = response.status;
    if (status < 200 || status >= 300) error = `answered HTTP ${status}`;
  } catch (failure) {
    error = String(failure);
  }
  const done = Date.now();
  return {
    id,
    ok: error === null ? 1 : 0,
    at: new Date(startedAt).toISOString(),
    done: new Date(done).toISOString(),
    retry: new Date(done + RETRY_DELAY_SECONDS * 1000).toISOString(),
    status,
    error,
    ms: done - startedAt,
  };
}

/**
 * Production lets an invocation wait on at most 6 outbound connections at once (a seventh fetch waits unseen, its
 * timeout running); `wrangler dev` does not enforce it, so the floor keeps it itself, as the app's consumer does:
 * six lanes, each sending the next request when its last answer is in.
 * @param {Awaited<ReturnType<typeof signed>>[]} requests
 */
async function postWithinConnectionLimit(requests) {
  /** @type {Awaited<ReturnType<typeof post>>[]} */
  const outcomes = [];
  let next = 0;
  const lane = async () => {
    while (next < requests.length) {
      const i = next++;
      outcomes[i] = await post(/** @type {Awaited<ReturnType<typeof signed>>} */ (requests[i]));
    }
  };
  await Promise.all(Array.from({ length: Math.min(OPEN_CONNECTIONS, requests.length) }, lane));
  return outcomes;
}

/** @typedef {{ id: number, event_id: string, url: string, secret: string, envelope: string }} Claimed */
/** @typedef {{ DB: D1Database, RATE_LIMIT: RateLimit, WEBHOOK_DELIVERIES: Queue<{ deliveryId: number }>, RUNTIME_TOKEN?: string }} Env */

export default {
  /**
   * One JSON line a request, as the app writes (src/lib/log.ts; docs/operations.md, Reading the logs): every
   * production Worker logs its requests, and locally each line travels through wrangler dev's output, which costs the
   * local stack more CPU than writing it (docs/performance.md); the floor pays it as the app does.
   * @param {Request} request
   * @param {Env} env
   * @param {ExecutionContext} ctx
   */
  async fetch(request, env, ctx) {
    const startedAt = Date.now();
    const url = new URL(request.url);
    const reported = /^\/internal\/v1\/businesses\/([^/]+)\/events$/.exec(url.pathname);
    // "/" is what scripts/local-worker.ts waits for before the run.
    const response =
      url.pathname === "/"
        ? new Response("The floor Worker of npm run bench.\n")
        : reported && request.method === "POST"
          ? await report(reported[1] ?? "", request, env, ctx)
          : await read(url, request, env);
    console.log(
      JSON.stringify({
        level: "info",
        kind: "request",
        requestId: crypto.randomUUID(),
        method: request.method,
        route: url.pathname,
        principal: reported ? "runtime" : "api_key",
        principalId: null,
        status: response.status,
        durationMs: Date.now() - startedAt,
        d1RoundTrips: 1,
      }),
    );
    return response;
  },

  /**
   * The delivery consumer: claim the batch (one statement) → sign every claimed delivery → POST them six at a time → record
   * every outcome (one D1 batch) → ack, or retry a failed one after the schedule's first delay; and one line for the
   * batch, as the app writes. A claim or record that throws fails the invocation, whose messages the queue retries.
   * @param {MessageBatch<{ deliveryId: number }>} batch
   * @param {Env} env
   */
  async queue(batch, env) {
    const startedAt = Date.now();
    const ids = JSON.stringify(batch.messages.map((message) => message.body.deliveryId));
    const claimed = await env.DB.prepare(CLAIM)
      .bind(ids, new Date(startedAt + LEASE_MS).toISOString(), new Date(startedAt).toISOString())
      .all();
    const requests = await Promise.all(claimed.results.map((delivery) => signed(/** @type {Claimed} */ (delivery))));
    const outcomes = await postWithinConnectionLimit(requests);
    const recorded = JSON.stringify(outcomes);
    // A batch of duplicates only claimed nothing, and has nothing to record.
    if (outcomes.length > 0) {
      await env.DB.batch([
        env.DB.prepare(ATTEMPTS_INSERT).bind(recorded),
        env.DB.prepare(DELIVERIES_MOVED_ON).bind(recorded),
      ]);
    }
    const failed = new Set(outcomes.filter((outcome) => !outcome.ok).map((outcome) => outcome.id));
    for (const message of batch.messages) {
      if (failed.has(message.body.deliveryId)) message.retry({ delaySeconds: RETRY_DELAY_SECONDS });
      else message.ack();
    }
    console.log(
      JSON.stringify({
        level: "info",
        kind: "delivery_batch",
        messages: batch.messages.length,
        attempts: outcomes.length,
        delivered: outcomes.length - failed.size,
        durationMs: Date.now() - startedAt,
      }),
    );
  },
};
