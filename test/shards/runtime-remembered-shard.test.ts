import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { events } from "../../src/db/schema";
import { shardBinding } from "../../src/db/shard-bindings";
import { SHARD_NAMES, SHARDS, type ShardName } from "../../src/db/shards";
import { MOVING_RETRY_AFTER_SECONDS } from "../../src/domain/access/business-moving";
import { switchAction } from "../../src/domain/actions/owner-decisions";
import { switchIntakeOn } from "../../src/domain/intakes/owner-decisions";
import { moveBusiness } from "../../src/domain/operations/business-move";
import worker from "../../src/index";
import { RuntimeApi } from "../../src/runtime/runtime-entrypoint";
import { registerAction } from "../helpers/actions";
import { moved } from "../helpers/business-move";
import { countingD1 } from "../helpers/counting-d1";
import { deps, shardDependencies } from "../helpers/dependencies";
import { createBusiness, shardDb } from "../helpers/fixtures";
import { BASE, RUNTIME } from "../helpers/http";
import { createIntake } from "../helpers/intakes";
import { newBooking } from "../helpers/platform-changes";
import { receiverBox } from "../helpers/receiver";
import { expectServerErrors } from "../helpers/server-errors";
import { REGIONS } from "../helpers/shards";
import { subscribe } from "../helpers/webhooks";

// A runtime call runs on the shard its isolate last found the business in, and reads the directory only when the
// business's row there is absent or marked by a move (docs/scaling.md, How a request finds its shard): a read makes
// one round trip, to the business's shard, and a write at most two (docs/architecture.md, Performance budget).

const MOVING = `The business is being moved to another database, and its data cannot change until the move ends: retry in ${MOVING_RETRY_AFTER_SECONDS} seconds.`;

/** Every database with its own count of round trips: the global one (`legacy`'s binding, DB) and each shard. */
function countedDatabases() {
  const trips = Object.fromEntries(SHARD_NAMES.map((shard) => [shard, [] as string[]])) as Record<ShardName, string[]>;
  const bindings = Object.fromEntries(
    SHARD_NAMES.map((shard) => [SHARDS[shard].binding, countingD1(shardBinding(env, shard), trips[shard]).d1]),
  );
  const counts = () =>
    Object.fromEntries(SHARD_NAMES.map((shard) => [shard, trips[shard].length]).filter(([, n]) => n !== 0));
  return { bindings, counts };
}

type Counted = { status: number; body: unknown; trips: Record<string, number> };

/** A runtime HTTP call through the Worker's fetch handler, its round trips counted per database before its answer. */
async function overHttp(method: string, path: string, body?: unknown): Promise<Counted> {
  const { bindings, counts } = countedDatabases();
  const headers: Record<string, string> = { ...RUNTIME };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const request = new Request(`${BASE}/internal/v1/businesses/${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const ctx = createExecutionContext();
  const response = await worker.fetch(request, { ...env, ...bindings }, ctx);
  const trips = counts();
  await waitOnExecutionContext(ctx);
  return { status: response.status, body: await response.json(), trips };
}

/** A call of the RuntimeApi entrypoint on counting bindings, its round trips counted per database. */
async function overRpc(call: (api: RuntimeApi) => Promise<{ ok: boolean; status?: number }>): Promise<Counted> {
  const { bindings, counts } = countedDatabases();
  const ctx = createExecutionContext();
  const result = await call(new RuntimeApi(ctx, { ...env, ...bindings }));
  const trips = counts();
  await waitOnExecutionContext(ctx);
  return { status: result.ok ? 200 : (result.status ?? 0), body: result, trips };
}

/** A business in `shard` with an action and an intake switched on, and an endpoint for its events. */
async function runtimeBusiness(shard: ShardName) {
  const { business, apiKey } = await createBusiness({ shard, name: `Salon in ${shard}` });
  const box = receiverBox(`remembered-${shard}`);
  await subscribe(apiKey, box.url("/ok"), ["booking.created", "intake.completed"]);
  const action = await registerAction(apiKey, `slots_${shard}`, { url: box.url("/ok") });
  await switchAction(shardDependencies(shard), business.id, action.id, true);
  const intake = await createIntake(apiKey);
  await switchIntakeOn(shardDependencies(shard), business.id, intake.id);
  return { business, action, intake };
}

/** The events of `businessId` stored in `shard`. */
const eventsIn = (shard: ShardName, businessId: string) =>
  shardDb(shard).$count(events, eq(events.businessId, businessId));

const callBody = () => ({
  conversation_id: "conv-remembered",
  message_id: crypto.randomUUID(),
  channel: "whatsapp",
  arguments: {},
});

describe.each(REGIONS)("every runtime call of a business in %s, on a warm isolate", async (shard) => {
  const { business, action, intake } = await runtimeBusiness(shard);
  const id = business.id;
  const cid = `conv-${crypto.randomUUID()}`;
  const start = { intake_id: intake.id, channel: "whatsapp" };
  // The first call of this isolate reads the directory once, and remembers the shard.
  const first = await overHttp("GET", `${id}/context?channel=whatsapp`);

  it("the first call reads the directory once, then the shard once", () => {
    expect(first).toMatchObject({ status: 200, trips: { legacy: 1, [shard]: 1 } });
  });

  // [call, status, round trips on the business's shard]: none in the global database. An action call reads the
  // business and action and reserves the call within its message's limit in one batch, and records the outcome.
  // An intake's turn checks the business's row here, then its conversation's object does the rest (a start reads the
  // intake, 1; a completing answer reads and writes, 2, in the object's own calls to the shard).
  const HTTP: Array<[string, string, string, unknown, number, number]> = [
    ["GET", "context", `${id}/context?channel=whatsapp`, undefined, 200, 1],
    ["PUT", "plan", `${id}/plan`, { plan: "business", active: true }, 200, 1],
    ["POST", "events", `${id}/events`, { booking: newBooking() }, 201, 2],
    ["POST", "action call", `${id}/actions/${action.name}/call`, callBody(), 200, 2],
    ["POST", "intake start", `${id}/conversations/${cid}/intake`, start, 201, 1],
    ["POST", "intake answer", `${id}/conversations/${cid}/intake/answers`, { answers: { budget: "Under 5k" } }, 200, 1],
    ["GET", "intake state", `${id}/conversations/${cid}/intake`, undefined, 200, 1],
    ["POST", "intake decline", `${id}/conversations/${cid}/intake/decline`, undefined, 200, 1],
  ];

  it.each(HTTP)("%s %s: over HTTP, only its shard", async (method, _name, path, body, status, trips) => {
    const counted = await overHttp(method, path, body);
    expect(counted.status, JSON.stringify(counted.body)).toBe(status);
    expect(counted.trips).toEqual({ [shard]: trips });
  });

  const rpcCid = `conv-${crypto.randomUUID()}`;
  const RPC: Array<[string, (api: RuntimeApi) => Promise<{ ok: boolean }>, number]> = [
    ["context", (api) => api.context(id, "whatsapp"), 1],
    ["setPlan", (api) => api.setPlan(id, { plan: "business", active: true }), 1],
    ["reportChange", (api) => api.reportChange(id, { booking: newBooking() }), 2],
    ["callAction", (api) => api.callAction(id, action.name, callBody()), 2],
    ["startIntake", (api) => api.startIntake(id, rpcCid, start), 1],
    ["answerIntake", (api) => api.answerIntake(id, rpcCid, { answers: { budget: "Under 5k" } }), 1],
    ["intakeState", (api) => api.intakeState(id, rpcCid), 1],
    ["declineIntake", (api) => api.declineIntake(id, rpcCid), 1],
  ];

  it.each(RPC)("RuntimeApi.%s: only its shard", async (_name, call, trips) => {
    const counted = await overRpc(call);
    expect(counted.body).toMatchObject({ ok: true });
    expect(counted.trips).toEqual({ [shard]: trips });
  });
});

describe("a business moved between two calls of a warm isolate", async () => {
  const { business } = await runtimeBusiness("eu1");
  const id = business.id;
  await overHttp("GET", `${id}/context?channel=whatsapp`);
  const before = await eventsIn("eu1", id);

  it("is found in its new shard: the old one has no row, the directory is read once, then remembered", async () => {
    await moved(id, "us1");
    const after = await overHttp("GET", `${id}/context?channel=whatsapp`);
    expect(after).toMatchObject({ status: 200, body: { business: { id } }, trips: { eu1: 1, legacy: 1, us1: 1 } });
    const report = await overHttp("POST", `${id}/events`, { booking: newBooking() });
    expect(report).toMatchObject({ status: 201, trips: { us1: 2 } });
    expect(await eventsIn("us1", id)).toBe(before + 1);
    expect(await eventsIn("eu1", id)).toBe(0);
  });

  it("while it moves, is read from the shard it leaves and refuses writes with 503, writing nothing", async () => {
    expectServerErrors();
    // A step of 6 statements marks the business and stops before copying anything.
    expect(await moveBusiness(deps, id, "eu1", 6)).toMatchObject({ status: "copying", rows_copied: 0 });
    const read = await overHttp("GET", `${id}/context?channel=whatsapp`);
    expect(read).toMatchObject({ status: 200, body: { business: { id } }, trips: { legacy: 1, us1: 2 } });
    const write = await overHttp("POST", `${id}/events`, { booking: newBooking() });
    // The read found the mark, so this isolate no longer remembers a shard: the directory refuses the write.
    expect(write).toMatchObject({ status: 503, trips: { legacy: 1 } });
    expect(write.body).toMatchObject({ error: MOVING });
    expect(await eventsIn("us1", id)).toBe(before + 1);
  });

  it("once moved back, takes writes in the shard it returned to", async () => {
    expect(await moved(id, "eu1")).toMatchObject({ status: "moved" });
    const report = await overHttp("POST", `${id}/events`, { booking: newBooking() });
    expect(report).toMatchObject({ status: 201, trips: { eu1: 2, legacy: 1 } });
    expect(await eventsIn("eu1", id)).toBe(before + 2);
  });
});

describe("an isolate that remembers a shard the business left, while the business is copied back into it", async () => {
  const { business } = await runtimeBusiness("eu1");
  const id = business.id;
  // This isolate finds it in eu1, and makes no call while it moves to us1.
  await overHttp("GET", `${id}/context?channel=whatsapp`);
  await moved(id, "us1");
  // A move back starts, and copies the business's row into eu1, marked, before its switch.
  let step = await moveBusiness(deps, id, "eu1", 13);
  while (step.rows_copied === 0) step = await moveBusiness(deps, id, "eu1", 13);
  const copies = await eventsIn("eu1", id);

  it("finds the copy marked, reads the directory, and refuses the write: nothing lands in the copy", async () => {
    expectServerErrors();
    expect(step.status).toMatch(/^(copying|verifying)$/);
    const write = await overHttp("POST", `${id}/events`, { booking: newBooking() });
    expect(write).toMatchObject({ status: 503, body: { error: MOVING }, trips: { eu1: 1, legacy: 1 } });
    expect(await eventsIn("eu1", id)).toBe(copies);
  });

  it("answers a read from the shard the directory names", async () => {
    const read = await overRpc((api) => api.context(id, "whatsapp"));
    expect(read).toMatchObject({ status: 200, body: { ok: true, value: { business: { id } } } });
    expect(read.trips).toMatchObject({ legacy: 1, us1: 1 });
  });

  it("refuses an intake's turn there too, before its conversation's object is reached", async () => {
    const turn = await overRpc((api) => api.startIntake(id, `conv-${crypto.randomUUID()}`, { channel: "whatsapp" }));
    expect(turn).toMatchObject({ status: 503, body: { ok: false, error: MOVING } });
  });

  it("after the move ends, answers from the shard it returned to", async () => {
    expect(await moved(id, "eu1")).toMatchObject({ status: "moved" });
    const read = await overHttp("GET", `${id}/context?channel=whatsapp`);
    expect(read).toMatchObject({ status: 200, body: { business: { id } } });
    const report = await overHttp("POST", `${id}/events`, { booking: newBooking() });
    expect(report).toMatchObject({ status: 201, trips: { eu1: 2 } });
  });
});

describe("a business the directory does not know, on any isolate", () => {
  it("answers 404 after one read of the directory and one of the shard it names", async () => {
    const unknown = await overHttp("GET", `${crypto.randomUUID()}/context?channel=whatsapp`);
    expect(unknown).toMatchObject({ status: 404, body: { error: "No business has that id." }, trips: { legacy: 2 } });
  });
});
