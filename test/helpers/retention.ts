import { eq, inArray } from "drizzle-orm";
import {
  actionCalls,
  actions,
  deliveryAttempts,
  events,
  oauthClients,
  oauthGrants,
  webhookDeliveries,
  webhookEndpoints,
} from "../../src/db/schema";
import { applyRetention } from "../../src/domain/operations/retention";
import { iso } from "../../src/lib/time";
import { deps } from "./dependencies";
import { db, globalDb, shardD1 } from "./fixtures";
import { insertClient } from "./oauth";

// Rows aged for the retention run (src/domain/operations/retention.ts), written by the files of test/operations/retention-*.

export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;
export const ago = (ms: number) => iso(Date.now() - ms);
export const run = () => applyRetention(deps);

let serial = 0;
export const unique = (prefix: string) => `${prefix}_${Date.now().toString(36)}_${serial++}`;

export async function endpointOf(businessId: string) {
  const [endpoint] = await db
    .insert(webhookEndpoints)
    .values({
      businessId,
      url: "https://partner.example/hooks",
      events: ["*"],
      description: "",
      secret: "whsec_test",
      createdAt: iso(Date.now()),
    })
    .returning();
  if (!endpoint) throw new Error("endpoint not created");
  return endpoint.id;
}

/** An event of `businessId` written `age` ago, with one delivery (created `deliveryAge` ago) and two attempts. */
export async function eventWithDelivery(businessId: string, endpointId: number, age: number, deliveryAge = age) {
  const id = unique("evt");
  await db.insert(events).values({ id, businessId, type: "booking.created", envelope: "{}", createdAt: ago(age) });
  const [delivery] = await db
    .insert(webhookDeliveries)
    .values({
      businessId,
      eventId: id,
      endpointId,
      status: "failed",
      nextAttemptAt: ago(deliveryAge),
      createdAt: ago(deliveryAge),
    })
    .returning();
  if (!delivery) throw new Error("delivery not created");
  await db.insert(deliveryAttempts).values([
    { deliveryId: delivery.id, attemptedAt: ago(deliveryAge), statusCode: 500, durationMs: 10 },
    { deliveryId: delivery.id, attemptedAt: ago(deliveryAge), statusCode: 500, durationMs: 10 },
  ]);
  return { eventId: id, deliveryId: delivery.id };
}

export const storedEvents = async (ids: string[]) =>
  (await db.select({ id: events.id }).from(events).where(inArray(events.id, ids))).map((row) => row.id).sort();

/** `count` events of `businessId` created at `createdAt`, in one statement: ids `<prefix>1` .. `<prefix><count>`. */
export async function manyEvents(businessId: string, prefix: string, count: number, createdAt: string) {
  await shardD1
    .prepare(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?1)
     INSERT INTO events (id, business_id, type, envelope, created_at)
     SELECT ?2 || i, ?3, 'booking.created', '{}', ?4 FROM n`,
    )
    .bind(count, prefix, businessId, createdAt)
    .run();
}

/** An action of `businessId` with calls written `ages` ago, oldest first (the first age the oldest). */
export async function actionWithCalls(businessId: string, ages: number[]) {
  const [action] = await db
    .insert(actions)
    .values({
      businessId,
      name: unique("action"),
      title: "Look up",
      description: "Looks up",
      url: "https://partner.example/action",
      parameters: { type: "object", properties: {} },
      secret: "whsec_test",
      createdAt: iso(Date.now()),
      updatedAt: iso(Date.now()),
    })
    .returning();
  if (!action) throw new Error("action not created");
  // Oldest first, as calls are written; ten rows a statement, within D1's 100 bound parameters.
  const callIds: number[] = [];
  for (let i = 0; i < ages.length; i += 10) {
    const rows = await db
      .insert(actionCalls)
      .values(
        ages.slice(i, i + 10).map((age) => ({
          actionId: action.id,
          businessId,
          conversationId: "conv",
          messageId: unique("msg"),
          channel: "whatsapp",
          status: "success" as const,
          arguments: {},
          createdAt: ago(age),
        })),
      )
      .returning({ id: actionCalls.id });
    callIds.push(...rows.map((row) => row.id));
  }
  return { actionId: action.id, callIds };
}
/** The ids of the action's stored calls, in the order they were made. */
export const callsOf = async (actionId: number) =>
  (
    await db
      .select({ id: actionCalls.id })
      .from(actionCalls)
      .where(eq(actionCalls.actionId, actionId))
      .orderBy(actionCalls.id)
  ).map((row) => row.id);
/**
 * A connection of a fresh OAuth client to `businessId`, made long ago: what codes and tokens belong to. The client is
 * registered in the global database and copied into the business's shard, as an approval does.
 */
export async function grantOf(businessId: string) {
  const clientId = unique("client");
  await insertClient({ id: clientId, secret: "secret", method: "client_secret_post" });
  const [registered] = await globalDb.select().from(oauthClients).where(eq(oauthClients.id, clientId));
  if (!registered) throw new Error("client not registered");
  await db.insert(oauthClients).values(registered);
  const [grant] = await db
    .insert(oauthGrants)
    .values({ clientId, businessId, scope: "api", createdAt: ago(400 * DAY) })
    .returning();
  if (!grant) throw new Error("grant not created");
  return grant.id;
}

/** Rows of the kinds that expire, each made long ago; only the timestamp retention reads is given. */
export const rows = {
  code: (grantId: number, expiresAt: string) => ({
    codeHash: unique("code"),
    grantId,
    redirectUri: "https://partner.example/cb",
    codeChallenge: "challenge",
    expiresAt,
    createdAt: ago(400 * DAY),
  }),
  session: (ownerId: number, expiresAt: string) => ({
    ownerId,
    tokenHash: unique("session"),
    csrfSecret: "csrf",
    createdAt: ago(400 * DAY),
    expiresAt,
  }),
  idempotency: (businessId: string, createdAt: string) => ({
    businessId,
    principal: "key:1",
    key: unique("idem"),
    fingerprint: "f",
    status: 201,
    body: "{}",
    createdAt,
  }),
  token: (grantId: number, name: string, ended: { expiresAt: string; revokedAt?: string; rotatedAt?: string }) => ({
    tokenHash: unique(name),
    kind: "refresh" as const,
    grantId,
    createdAt: ago(400 * DAY),
    ...ended,
  }),
};
