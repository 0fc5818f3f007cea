import { env } from "cloudflare:test";
import { eq, getTableName, sql } from "drizzle-orm";
import { expect } from "vitest";
import { insertMany, runBatch } from "../../src/db/batches";
import {
  actionCalls,
  bookings,
  businessShards,
  deliveryAttempts,
  intakeResponses,
  knowledgeItems,
  orders,
  ownerKnowledgeSources,
} from "../../src/db/schema";
import type { ShardName } from "../../src/db/shards";
import { BUSINESS_ROWS } from "../../src/domain/operations/business-rows";
import type { BusinessMoveAnswer } from "../../src/schemas/runtime";
import { registerAction } from "./actions";
import { bookingRow, createApiKey, globalDb, legacyDb, orderRow, shardDb } from "./fixtures";
import { call, json } from "./http";
import { createIntake } from "./intakes";
import { mcpBox, registered, usableTool } from "./mcp-servers";
import { connectApp, createOwnerBusiness } from "./oauth";
import { receiverBox } from "./receiver";
import { outboxOnly, subscribe } from "./webhooks";

/** The operators' credential, which the move alone takes (docs/operations.md, Moving a business). */
export const OPERATOR = { Authorization: `Bearer ${env.OPERATOR_TOKEN}` };

/**
 * One step of `POST /internal/v1/businesses/{id}/move` (docs/scaling.md, Moving a business between shards), with the
 * operator token unless other headers are given, on the test's bindings with some replaced (a counting or failing
 * database).
 */
export const move = (
  businessId: string,
  to: string,
  headers: Record<string, string> = OPERATOR,
  bindings: Partial<typeof env> = {},
) => call(`/internal/v1/businesses/${businessId}/move`, { method: "POST", headers, body: { to }, bindings });

/** Steps a move may take in a test before it is taken to be stuck. */
const MOST_STEPS = 100;

/** The move's steps, each a 202, until its 200: the final answer. */
export async function moved(businessId: string, to: string) {
  for (let step = 1; step <= MOST_STEPS; step++) {
    const response = await move(businessId, to);
    if (response.status !== 202) {
      await expect(response).toHaveStatus(200);
      return json<BusinessMoveAnswer>(response);
    }
  }
  throw new Error(`The move of ${businessId} to ${to} did not end in ${MOST_STEPS} steps.`);
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
 * and its failed attempt, an action with a call, an MCP server with its tool's action, an intake
 * with a response, knowledge pushed and added by the owner, and an idempotency record.
 */
export async function populatedLegacyBusiness() {
  const owner = await createOwnerBusiness({ name: "Shop that moves", shard: "legacy" });
  const { business, apiKey } = owner;
  const now = new Date().toISOString();
  const second = await createApiKey(business.id, { shard: "legacy" });
  const app = await connectApp(owner);
  await legacyDb.batch([
    legacyDb
      .insert(bookings)
      .values([bookingRow(business.id, { id: platformId() }), bookingRow(business.id, { id: platformId() })]),
    legacyDb.insert(orders).values(orderRow(business.id, { id: platformId() })),
  ]);
  const box = receiverBox("moved-delivery");
  await subscribe(apiKey, box.url("/ok"));
  const {
    deliveryIds: [deliveryId = 0],
  } = await outboxOnly(business, [{ event: "review.created", data: { review: { id: 1 } } }], "legacy");
  // An earlier attempt that failed: the delivery is still pending, with its history.
  await legacyDb
    .insert(deliveryAttempts)
    .values({ deliveryId, attemptedAt: new Date().toISOString(), statusCode: 500, durationMs: 12 });
  const action = await registerAction(apiKey, "stock_before_move");
  await legacyDb.insert(actionCalls).values({
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
  const mcp = mcpBox("moved-mcp");
  await mcp.offer({ tools: [usableTool("tool_before_move")] });
  await registered(apiKey, { url: mcp.url("stateless") });
  const intake = await createIntake(apiKey);
  await legacyDb.insert(intakeResponses).values({
    intakeId: intake.id,
    businessId: business.id,
    conversationId: "conv-before-move",
    channel: "whatsapp",
    runId: `run-${crypto.randomUUID()}`,
    answers: [{ id: "full_name", label: "What is your name?", type: "text", value: "Ana Souza" }],
    status: "completed",
    completedAt: now,
    createdAt: now,
  });
  await legacyDb.insert(knowledgeItems).values({
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
  await legacyDb.insert(ownerKnowledgeSources).values({
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
  await expect(idempotent).toHaveStatus(201);
  return { owner, business, apiKey, secondKey: second.apiKey, app, box, deliveryId, action, intake };
}

/** The business's row of the directory (docs/scaling.md, Regional shards): its shard, and its mark while it moves. */
export async function directoryRowOf(businessId: string) {
  const [row] = await globalDb.select().from(businessShards).where(eq(businessShards.businessId, businessId));
  return row;
}

/** That `shard` holds no row of the business in any table a move copies. */
export async function expectNoRowsIn(shard: ShardName, businessId: string) {
  for (const [table, rows] of Object.entries(await rowsIn(shard, businessId))) expect(rows, table).toEqual([]);
}

/** A legacy business with an owner, an API key and `count` bookings: enough rows that its move takes several steps. */
export async function businessWithBookings(count: number) {
  const owner = await createOwnerBusiness({ shard: "legacy" });
  const rows = Array.from({ length: count }, () => bookingRow(owner.business.id));
  await runBatch(legacyDb, insertMany(legacyDb, bookings, rows));
  return owner;
}
