import { getTableName, sql } from "drizzle-orm";
import { expect } from "vitest";
import {
  actionCalls,
  bookings,
  deliveryAttempts,
  knowledgeItems,
  orders,
  ownerKnowledgeSources,
} from "../../src/db/schema";
import type { ShardName } from "../../src/db/shards";
import { BUSINESS_ROWS } from "../../src/domain/operations/business-rows";
import { registerAction } from "./actions";
import { bookingRow, createApiKey, db, orderRow, shardDb } from "./fixtures";
import { call, json, RUNTIME } from "./http";
import { createIntake, insertResponses } from "./intakes";
import { connectApp, createOwnerBusiness } from "./oauth";
import { receiverBox } from "./receiver";
import { outboxOnly, subscribe } from "./webhooks";

/** `POST /internal/v1/businesses/{id}/move` (docs/scaling.md, Moving a business between shards). */
export const move = (businessId: string, to: string, headers: Record<string, string> = RUNTIME) =>
  call(`/internal/v1/businesses/${businessId}/move`, { method: "POST", headers, body: { to } });

/** The move's answer, which must be a 200. */
export async function moved(businessId: string, to: string) {
  const response = await move(businessId, to);
  expect(response.status, await response.clone().text()).toBe(200);
  return json<{ business_id: string; from: string; to: string; rows_copied: number }>(response);
}

/** Every row of the business in `shard`, table by table, in rowid order: what a move copies. */
export async function rowsIn(shard: ShardName, businessId: string) {
  const tables: Record<string, unknown[]> = {};
  for (const rows of BUSINESS_ROWS) {
    tables[getTableName(rows.table)] = await shardDb(shard)
      .select()
      .from(rows.table)
      .where(rows.of(businessId))
      .orderBy(sql`rowid`);
  }
  return tables;
}

/** Booking and order ids of the core platform are unique across businesses: random here, so no other test's collide. */
const platformId = () => 1_000_000_000 + Math.floor(Math.random() * 1_000_000_000);

/**
 * A legacy business with a row in every table a move copies: its owner, two API keys, an app connection (client copy,
 * grant, code, tokens), bookings and an order, an endpoint with a pending delivery never enqueued
 * and its failed attempt, an action with a call, an intake
 * with responses, knowledge pushed and added by the owner, and an idempotency record.
 */
export async function populatedLegacyBusiness() {
  const owner = await createOwnerBusiness({ name: "Shop that moves" });
  const { business, apiKey } = owner;
  const now = new Date().toISOString();
  const second = await createApiKey(business.id);
  const app = await connectApp(owner);
  await db.batch([
    db
      .insert(bookings)
      .values([bookingRow(business.id, { id: platformId() }), bookingRow(business.id, { id: platformId() })]),
    db.insert(orders).values(orderRow(business.id, { id: platformId() })),
  ]);
  const box = receiverBox("moved-delivery");
  await subscribe(apiKey, box.url("/ok"));
  const {
    deliveryIds: [deliveryId = 0],
  } = await outboxOnly(business, [{ event: "review.created", data: { review: { id: 1 } } }]);
  // An earlier attempt that failed: the delivery is still pending, with its history.
  await db
    .insert(deliveryAttempts)
    .values({ deliveryId, attemptedAt: new Date().toISOString(), statusCode: 500, durationMs: 12 });
  const action = await registerAction(apiKey, "stock_before_move");
  await db.insert(actionCalls).values({
    actionId: action.id,
    businessId: business.id,
    conversationId: "conv-before-move",
    messageId: "msg-before-move",
    channel: "whatsapp",
    status: "success",
    arguments: {},
    httpStatus: 200,
    durationMs: 40,
    createdAt: now,
  });
  const intake = await createIntake(apiKey);
  await insertResponses(intake, business.id, 2);
  await db.insert(knowledgeItems).values({
    businessId: business.id,
    key: "opening-hours",
    title: "Opening hours",
    content: "Monday to Friday, 9 to 5.",
    chars: 25,
    apiKeyId: null,
    oauthGrantId: app.grantId,
    createdAt: now,
    updatedAt: now,
  });
  await db.insert(ownerKnowledgeSources).values({
    businessId: business.id,
    kind: "website",
    title: "Our website",
    location: "https://shop.example",
    createdAt: now,
  });
  const idempotent = await call("/api/v1/actions", {
    key: apiKey,
    method: "POST",
    headers: { "Idempotency-Key": crypto.randomUUID() },
    body: {
      name: "idempotent_action",
      title: "Once",
      description: "Created once, whatever the retries.",
      url: "https://partner.example/x",
    },
  });
  expect(idempotent.status, await idempotent.clone().text()).toBe(201);
  return { owner, business, apiKey, secondKey: second.apiKey, app, box, deliveryId, action, intake };
}
