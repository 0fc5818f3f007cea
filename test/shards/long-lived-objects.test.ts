import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { describe, expect, it, vi } from "vitest";
import { webhookEndpoints } from "../../src/db/schema";
import { SHARD_NAMES, type ShardName } from "../../src/db/shards";
import { MAX_LISTENING_SESSIONS } from "../../src/domain/webhooks/listener-endpoints";
import {
  conversationObject,
  jurisdictionOf,
  jurisdictionOfSession,
  objectIn,
  sessionIdPrefix,
  sessionObject,
} from "../../src/durable-objects/jurisdictions";
import type { ListeningSession, ListeningSessionRecord } from "../../src/durable-objects/listening-session";
import { moved } from "../helpers/business-move";
import { createBusiness, shardDb } from "../helpers/fixtures";
import { connect, type Session, startSession } from "../helpers/listen-sessions";
import { setMoving } from "../helpers/shards";

// docs/scaling.md, Where an EU business's data lives: an EU business's Durable Objects are created in the EU
// jurisdiction; and a listening session finds its business's shard through the directory when it writes.

/** A namespace that records how each object is addressed, as a production binding would be asked. */
function recordingNamespace() {
  const calls: string[] = [];
  const namespace = {
    idFromName: (name: string) => {
      calls.push(`idFromName(${name})`);
      return { name } as unknown as DurableObjectId;
    },
    get: (id: DurableObjectId) => ({ id }) as unknown as DurableObjectStub,
    jurisdiction: (jurisdiction: string) => {
      calls.push(`jurisdiction(${jurisdiction})`);
      return namespace;
    },
  };
  return { namespace: namespace as unknown as DurableObjectNamespace, calls };
}

describe("the jurisdiction of a business's objects", () => {
  it.each(SHARD_NAMES)("for a business in %s, in production", (shard) => {
    const { namespace, calls } = recordingNamespace();
    objectIn(namespace, jurisdictionOf(shard), "conv-1", {});
    const inEu = shard === "eu1";
    expect(calls).toEqual(inEu ? ["jurisdiction(eu)", "idFromName(conv-1)"] : ["idFromName(conv-1)"]);
  });

  it("is emulated by name only when the local switch says so, as workerd has no jurisdictions", () => {
    const { namespace, calls } = recordingNamespace();
    objectIn(namespace, "eu", "conv-1", { LOCAL_DURABLE_OBJECT_JURISDICTIONS: "emulated" });
    objectIn(namespace, "eu", "conv-1", { LOCAL_DURABLE_OBJECT_JURISDICTIONS: "" });
    expect(calls).toEqual(["idFromName(eu:conv-1)", "jurisdiction(eu)", "idFromName(conv-1)"]);
  });

  it("addresses conversations and sessions through it", () => {
    const { namespace, calls } = recordingNamespace();
    const env = { INTAKE_CONVERSATIONS: namespace, LISTENING_SESSIONS: namespace } as never;
    conversationObject(env, { conversationId: "c", businessId: "b", shard: "eu1" });
    conversationObject(env, { conversationId: "c", businessId: "b", shard: "us1" });
    const european = `${sessionIdPrefix("eu1")}${"a".repeat(22)}`;
    const american = `${sessionIdPrefix("us1")}${"a".repeat(22)}`;
    sessionObject(env, european);
    sessionObject(env, american);
    expect(calls).toEqual([
      "jurisdiction(eu)",
      "idFromName(c)",
      "idFromName(c)",
      "jurisdiction(eu)",
      `idFromName(${european})`,
      `idFromName(${american})`,
    ]);
    expect([european, american, "ls_short", "xx_aaaaaaaaaaaaaaaaaaaaaa"].map(jurisdictionOfSession)).toEqual([
      "eu",
      null,
      undefined,
      undefined,
    ]);
  });
});

const listenerEndpoints = (shard: ShardName, session: Session) =>
  shardDb(shard).$count(webhookEndpoints, eq(webhookEndpoints.id, session.endpoint_id));

describe("a listening session whose business moves", () => {
  it("deletes its endpoint in the new shard when it ends, so the next sessions start", {
    timeout: 20_000,
  }, async () => {
    const { business, apiKey } = await createBusiness({ shard: "us1" });
    const session = await startSession(apiKey);
    expect(session.session_id.startsWith("ls_eu_")).toBe(false);
    const { socket } = await connect(session);

    await moved(business.id, "eu1");
    expect(await listenerEndpoints("eu1", session)).toBe(1);
    socket.close(1000, "done");

    await vi.waitFor(async () => expect(await listenerEndpoints("eu1", session)).toBe(0), { timeout: 5000 });
    expect(await listenerEndpoints("us1", session)).toBe(0);
    const next = [];
    for (let n = 0; n < MAX_LISTENING_SESSIONS; n++) next.push(await startSession(apiKey));
    expect(next.every((started) => started.session_id.startsWith("ls_eu_"))).toBe(true);
  });

  it("that ends during the move deletes its endpoint once the move has ended", { timeout: 20_000 }, async () => {
    const { business, apiKey } = await createBusiness({ shard: "eu1" });
    const session = await startSession(apiKey);
    const { socket } = await connect(session);
    await setMoving(business.id, true);
    socket.close(1000, "done");
    const object = sessionObject(env, session.session_id);
    // The object has taken the close; while the business moves, its endpoint stays, and an alarm will try again.
    await vi.waitFor(
      async () => {
        const record = await runInDurableObject<ListeningSession, ListeningSessionRecord | undefined>(
          object,
          (_instance, state) => state.storage.get("session"),
        );
        expect(record?.ended).toBe(true);
      },
      { timeout: 5000 },
    );
    expect(await listenerEndpoints("eu1", session)).toBe(1);
    await setMoving(business.id, false);
    expect(await runDurableObjectAlarm(object)).toBe(true);
    expect(await listenerEndpoints("eu1", session)).toBe(0);
  });
});
