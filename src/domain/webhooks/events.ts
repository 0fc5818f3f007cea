import { and, eq, inArray, type SQL, sql } from "drizzle-orm";
import { insertMany } from "../../db/batches";
import type { Database } from "../../db/client";
import { runRead } from "../../db/reads";
import { events, webhookDeliveries, webhookEndpoints } from "../../db/schema";
import { idsIn, oneOff, type Preparable, runStatements, statement } from "../../db/statements";
import { randomToken } from "../../lib/secrets";
import type { DeliveryQueue } from "../../queues/delivery-message";
import type { Business } from "../access/businesses";
import { audienceOf, reaches } from "./audience";
import { markEnqueued, newDeliveryColumns, queueBatches, sendDeliveries } from "./deliveries";
import type { WebhookEndpoint } from "./endpoints";
import { type EventName, subscribes } from "./event-catalog";
import type { EventDraft } from "./event-draft";
import { sendableEndpoint } from "./sendable-endpoint";

export type { EventDraft } from "./event-draft";

export type EmittedEvent = { id: string; event: EventName };

/**
 * Spec, Envelope: `id` (`evt_` + an opaque part), `event`, `created_at`, `business { id, handle, name }`, `data`; and
 * `test: true` on a test event (docs/webhooks.md, Test events), after the spec's members.
 */
function envelope(business: Business, draft: EventDraft, createdAt: string) {
  return {
    id: randomToken("evt_", 16),
    event: draft.event,
    created_at: createdAt,
    business: { id: business.id, handle: business.handle, name: business.name },
    data: draft.data,
    ...(draft.test ? { test: true } : {}),
  };
}

function storedEnvelope(json: string, dataFromSql: Readonly<Record<string, SQL>> = {}): string | SQL {
  const members = Object.entries(dataFromSql);
  if (members.length === 0) return json;
  const paths = members.map(([name, value]) => sql`, ${`$.data.${name}`}, ${value}`);
  return sql`json_set(${json}${sql.join(paths)})`;
}

function receives(endpoint: WebhookEndpoint, draft: EventDraft): boolean {
  if (draft.endpointId === undefined && !subscribes(endpoint.events, draft.event)) return false;
  return reaches(draft, endpoint);
}

/**
 * The outbox (docs/architecture.md, The outbox): each event and one delivery row per receiving endpoint are written in
 * ONE D1 batch, together with the caller's own statements (a booking snapshot, say), before anything is enqueued. If
 * the batch fails nothing was emitted; once it succeeded, nothing can be lost: the sweep enqueues what
 * `enqueueDeliveries` could not.
 */
export async function writeEvents(
  db: Database,
  business: Business,
  endpoints: WebhookEndpoint[],
  drafts: EventDraft[],
  statements: Preparable<unknown>[] = [],
) {
  const now = new Date().toISOString();
  const envelopes = drafts.map((draft) => ({ draft, envelope: envelope(business, draft, now) }));
  const eventRows = envelopes.map(({ draft, envelope }) => ({
    id: envelope.id,
    businessId: business.id,
    type: envelope.event,
    envelope: storedEnvelope(JSON.stringify(envelope), draft.dataFromSql),
    audience: audienceOf(draft, endpoints),
    createdAt: now,
  }));
  const deliveryInserts = envelopes.flatMap(({ draft, envelope }) => {
    const receiving = endpoints.filter((endpoint) => receives(endpoint, draft)).map((endpoint) => endpoint.id);
    if (receiving.length === 0) return [];
    return [deliveriesOf({ event: envelope.id, now, endpoints: JSON.stringify(receiving), business: business.id })];
  });
  const writes = [...[...statements, ...insertMany(db, events, eventRows)].map(oneOff), ...deliveryInserts];
  const results = await runStatements(db, writes);
  const deliveryIds = (results.slice(writes.length - deliveryInserts.length) as { id: number }[][])
    .flat()
    .map((row) => row.id);
  return {
    emitted: envelopes.map(({ envelope }): EmittedEvent => ({ id: envelope.id, event: envelope.event })),
    deliveryIds,
  };
}

/**
 * One delivery of the event per receiving endpoint (a JSON array of ids: one statement for any number), inserted
 * from the endpoint's own row: an endpoint deleted since it was read (its owner removed it while this report was on
 * its way) gets no delivery, instead of failing the foreign key and with it the whole batch (the event, the
 * snapshot). Rendered once (src/db/statements.ts); binds 5 parameters.
 */
const deliveriesOf = statement<{ event: string; now: string; endpoints: string; business: string }>()(
  (db, { event, now, endpoints, business }) =>
    db
      .insert(webhookDeliveries)
      .select(
        db
          .select(
            newDeliveryColumns(
              {
                businessId: webhookEndpoints.businessId,
                eventId: sql<string>`${event}`.as("event_id"),
                endpointId: webhookEndpoints.id,
              },
              now,
            ),
          )
          .from(webhookEndpoints)
          .where(
            and(
              inArray(webhookEndpoints.id, idsIn(endpoints)),
              eq(webhookEndpoints.businessId, business),
              // A disabled endpoint gets no new deliveries (docs/webhooks.md, Endpoint health).
              eq(webhookEndpoints.status, "enabled"),
            ),
          ),
      )
      .returning({ id: webhookDeliveries.id }),
);

/**
 * Puts deliveries on the queue (ids only), then marks them enqueued, chunk by chunk. Nothing here is thrown: the rows
 * are already in the outbox, so a failed send is left to the sweep on the cron trigger (docs/architecture.md, The
 * outbox), and a failed mark after a send only means the sweep sends that chunk once more, which the consumer's claim
 * makes harmless. The caller's answer (the report's 201) therefore never depends on the queue.
 */
export async function enqueueDeliveries(queue: DeliveryQueue, db: Database, deliveryIds: number[]): Promise<void> {
  for (const ids of queueBatches(deliveryIds)) {
    try {
      await sendDeliveries(queue, ids);
      await markEnqueued(db, ids, Date.now());
    } catch (error) {
      console.warn(
        JSON.stringify({
          level: "warn",
          message: "enqueue failed; the outbox sweep will retry",
          deliveries: ids.length,
          error: String(error),
        }),
      );
    }
  }
}

/** The dashboard's Test button (spec: `ping` `{ message }`): one event, delivered to that endpoint only. */
export async function sendPing(queue: DeliveryQueue, db: Database, business: Business, endpointId: number) {
  // A disabled endpoint is a 409, as for the partner's test events: a ping would be written and never sent.
  const endpoint = await runRead(db, sendableEndpoint(business.id, endpointId));
  const { emitted, deliveryIds } = await writeEvents(
    db,
    business,
    [endpoint],
    [{ event: "ping", data: { message: `Test event from ${business.name}'s dashboard.` }, endpointId }],
  );
  await enqueueDeliveries(queue, db, deliveryIds);
  return { event: emitted[0], deliveryId: deliveryIds[0] };
}
