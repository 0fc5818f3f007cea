import { and, eq, inArray, type Placeholder, type SQL, sql } from "drizzle-orm";
import { selectedRowsIds } from "../../../db/ids";
import { events, webhookDeliveries, webhookEndpoints } from "../../../db/schema";
import { asBound, type BatchStatement, idsIn, oneOff, runStatements, statement } from "../../../db/statements";
import type { Dependencies } from "../../../dependencies";
import { randomToken } from "../../../lib/secrets";
import { iso } from "../../../lib/time";
import type { EventName } from "../../../names-and-limits";
import type { Business } from "../../access/businesses";
import { audienceOf, reaches } from "../audience";
import type { WebhookEndpoint } from "../endpoints";
import { subscribes } from "../event-catalog";
import type { EventDraft } from "../event-draft";

/*
 * The outbox (docs/architecture.md, The outbox), one step a file: `write.ts` puts the events and their delivery rows in
 * ONE D1 batch with the caller's rows; `enqueue.ts` queues the ids after the answer; `sweep.ts` sends again what was
 * never enqueued, lost, or owes an extra attempt. A row exists before its message, so nothing is lost, and the
 * consumer's claim makes a duplicate harmless.
 */

export type { EventDraft } from "../event-draft";

export type EmittedEvent = { id: string; event: EventName };

/**
 * The envelope (docs/guides/webhooks.md, The request): `id` (`evt_` + an opaque part), `event`, `created_at`,
 * `business { id, handle, name }`, `data`; and
 * `test: true` on a test event (docs/webhooks.md, Test events), and `sandbox: true` on every event of a sandbox
 * business (docs/decisions.md, Sandbox operations), after those. A live business's envelope has neither.
 */
function envelope(business: Business, draft: EventDraft, createdAt: string) {
  return {
    id: randomToken("evt_", 16),
    event: draft.event,
    created_at: createdAt,
    business: { id: business.id, handle: business.handle, name: business.name },
    data: draft.data,
    ...(draft.test ? { test: true } : {}),
    ...(business.sandbox ? { sandbox: true } : {}),
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
 * `enqueueDeliveries` (enqueue.ts) could not.
 */
export async function writeEvents(
  deps: Dependencies,
  business: Business,
  endpoints: WebhookEndpoint[],
  drafts: EventDraft[],
  statements: BatchStatement[] = [],
  /** Statements after the deliveries' inserts, in the same batch: an endpoint ended once its last event is written. */
  after: BatchStatement[] = [],
) {
  const { db } = deps;
  const now = iso(deps.clock());
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
  // An envelope with members computed in the batch is its own SQL; every other event row is one shape.
  const eventInserts = eventRows.map((row) =>
    typeof row.envelope === "string"
      ? eventInserted({ ...row, envelope: row.envelope })
      : oneOff(db.insert(events).values(row)),
  );
  const writes = [...statements.map(asBound), ...eventInserts, ...deliveryInserts];
  const results = await runStatements(db, [...writes, ...after.map(asBound)]);
  const deliveryIds = (results.slice(writes.length - deliveryInserts.length, writes.length) as { id: number }[][])
    .flat()
    .map((row) => row.id);
  return {
    emitted: envelopes.map(({ envelope }): EmittedEvent => ({ id: envelope.id, event: envelope.event })),
    deliveryIds,
    /** What each of `statements` answered, in their order. */
    results: results.slice(0, statements.length),
  };
}

/** An event's row whose envelope is all JSON text: rendered once (src/db/statements.ts); binds 6 parameters. */
const eventInserted = statement<{
  id: string;
  businessId: string;
  type: string;
  envelope: string;
  audience: string | null;
  createdAt: string;
}>()((db, row) => db.insert(events).values(row));

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
                appEndpointId: webhookEndpoints.appEndpointId,
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
 * A new delivery row, pending and due now, with no attempt yet, as an INSERT ... SELECT writes it: the outbox's
 * deliveries of an event; a redelivery or a recover adds no row, it makes another attempt of the same one.
 * Every column in the table's order (drizzle's rule for an insert from a select); the business, event, endpoint and
 * app endpoint are those of the row it is selected from.
 */
const newDeliveryColumns = <Business, Event, Endpoint, AppEndpoint>(
  from: { businessId: Business; eventId: Event; endpointId: Endpoint; appEndpointId: AppEndpoint },
  now: Placeholder,
) => ({
  id: sql<number>`${selectedRowsIds("webhook_deliveries")}`.as("id"),
  businessId: from.businessId,
  eventId: from.eventId,
  endpointId: from.endpointId,
  status: sql<"pending">`'pending'`.as("status"),
  attemptCount: sql<number>`0`.as("attempt_count"),
  nextAttemptAt: sql<string>`${now}`.as("next_attempt_at"),
  enqueuedAt: sql<string | null>`null`.as("enqueued_at"),
  leaseUntil: sql<string | null>`null`.as("lease_until"),
  completedAt: sql<string | null>`null`.as("completed_at"),
  createdAt: sql<string>`${now}`.as("created_at"),
  extraAttemptAt: sql<string | null>`null`.as("extra_attempt_at"),
  appEndpointId: from.appEndpointId,
});
