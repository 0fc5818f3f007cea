import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { businesses } from "./businesses";
import { createdAt, previousSecretColumns, principalColumns, shardId, timestamp } from "./columns";

export const ENDPOINT_STATUSES = ["enabled", "disabled"] as const;

export const webhookEndpoints = sqliteTable(
  "webhook_endpoints",
  {
    id: shardId("webhook_endpoints"),
    businessId: text("business_id")
      .notNull()
      .references(() => businesses.id, { onDelete: "cascade" }),
    url: text("url").notNull(),
    /** Event names as subscribed; `["*"]` means every event but opt-in ones (docs/guides/webhooks.md, Subscribing). */
    events: text("events", { mode: "json" }).$type<string[]>().notNull(),
    description: text("description").notNull(),
    /** Kept in clear: it keys the HMAC of every delivery. Shown to the partner once, in the 201. */
    secret: text("secret").notNull(),
    ...previousSecretColumns(),
    /**
     * Endpoint health (docs/webhooks.md, Endpoint health): a disabled endpoint gets no new deliveries until it is
     * enabled again; `disabled_reason` says why, in a sentence for the partner and the owner.
     */
    status: text("status", { enum: ENDPOINT_STATUSES }).notNull().default("enabled"),
    disabledReason: text("disabled_reason"),
    lastSuccessAt: timestamp("last_success_at"),
    ...principalColumns(),
    /** The app endpoint (global, `app_endpoints`) this row is the business's copy of; null for the business's own. */
    appEndpointId: integer("app_endpoint_id"),
    createdAt: createdAt(),
  },
  // An endpoint's owner side (docs/architecture.md, Principals and owner sides) is its app connection, or the
  // business's API keys when `oauth_grant_id` is null: the partner's list is one range of this index, the business's
  // all of its prefix.
  (t) => [
    index("webhook_endpoints_business_side").on(t.businessId, t.oauthGrantId),
    // The copies of one app endpoint, changed and removed together across the shard's businesses.
    index("webhook_endpoints_app_endpoint").on(t.appEndpointId),
  ],
);

/** Every event emitted, with the envelope exactly as delivered. */
export const events = sqliteTable(
  "events",
  {
    id: text("id").primaryKey(),
    businessId: text("business_id")
      .notNull()
      .references(() => businesses.id, { onDelete: "cascade" }),
    type: text("type").notNull(),
    envelope: text("envelope").notNull(),
    /**
     * Who could receive it, for the Events API, which lists an event to a principal only if it could have been
     * delivered to it (docs/webhooks.md, Operating your integration): null for every side of the business; `keys` for
     * the API keys' side; `key:<id>` for one API key, `app:<grant id>` for one app connection (an intake's
     * `intake.completed`, a lifecycle event, a test event); `none` for an event listed to nobody, an
     * `intake.completed` whose intake's owner cannot be known (docs/decisions.md, Webhooks a partner can operate).
     */
    audience: text("audience"),
    createdAt: createdAt(),
  },
  (t) => [
    index("events_business_created").on(t.businessId, t.createdAt),
    // The Events API's `type` filter: a rare type is a range of its own, not a walk of the business's 30 days.
    index("events_business_type_created").on(t.businessId, t.type, t.createdAt),
    // Retention (docs/decisions.md, Operations): the events past 30 days, across businesses, are one range.
    index("events_created").on(t.createdAt),
  ],
);

export const DELIVERY_STATUSES = ["pending", "delivered", "failed"] as const;

/** The outbox: one row per (event, endpoint), written in the same D1 batch as the event, before any enqueue. */
export const webhookDeliveries = sqliteTable(
  "webhook_deliveries",
  {
    id: shardId("webhook_deliveries"),
    businessId: text("business_id")
      .notNull()
      .references(() => businesses.id, { onDelete: "cascade" }),
    eventId: text("event_id")
      .notNull()
      .references(() => events.id, { onDelete: "cascade" }),
    endpointId: integer("endpoint_id")
      .notNull()
      .references(() => webhookEndpoints.id, { onDelete: "cascade" }),
    status: text("status", { enum: DELIVERY_STATUSES }).notNull(),
    attemptCount: integer("attempt_count").notNull().default(0),
    /** When the next attempt is due; the cron sweep re-enqueues pending rows whose time has long passed. */
    nextAttemptAt: timestamp("next_attempt_at").notNull(),
    /**
     * Set by the first claim of its message, or by the sweep when it sends one: a pending row without it a minute after
     * it was written has no message known to have reached the queue (the sweep sends it).
     */
    enqueuedAt: timestamp("enqueued_at"),
    /** While an attempt is under way: no second consumer attempts the same delivery (duplicate messages). */
    leaseUntil: timestamp("lease_until"),
    completedAt: timestamp("completed_at"),
    createdAt: createdAt(),
    /**
     * One attempt owed outside the retry schedule (a partner's redeliver, or recover of a failed delivery): null when
     * none is. While owed, the time it was asked for (or last put on the queue by the sweep); while it is being made,
     * the end of its lease, which the consumer compares before clearing it. It never moves `attempt_count` or
     * `next_attempt_at` (src/domain/webhooks/README.md).
     */
    extraAttemptAt: timestamp("extra_attempt_at"),
    /**
     * The endpoint's `app_endpoint_id` when the delivery was written: an app endpoint's deliveries in every business
     * of the shard are one range of `webhook_deliveries_app_endpoint` (docs/scaling.md, An app's history across
     * shards). Null for a business's own endpoint.
     */
    appEndpointId: integer("app_endpoint_id"),
  },
  (t) => [
    index("webhook_deliveries_status_due").on(t.status, t.nextAttemptAt),
    index("webhook_deliveries_endpoint").on(t.endpointId, t.id),
    index("webhook_deliveries_app_endpoint").on(t.appEndpointId, t.id),
    // An endpoint's failures in a time range: `recover`, endpoint health and the removal page count by it.
    index("webhook_deliveries_endpoint_status").on(t.endpointId, t.status, t.completedAt),
    // An event's deliveries: recover's "delivered or pending since", and the cascade when an event is deleted.
    index("webhook_deliveries_event").on(t.eventId),
    index("webhook_deliveries_unenqueued")
      .on(t.createdAt)
      .where(sql`${t.status} = 'pending' and ${t.enqueuedAt} is null`),
    // The extra attempts the sweep sends again (owed a minute: their message lost, or never sent): few rows owe one.
    index("webhook_deliveries_extra_owed").on(t.extraAttemptAt).where(sql`${t.extraAttemptAt} is not null`),
  ],
);

export const deliveryAttempts = sqliteTable(
  "delivery_attempts",
  {
    id: shardId("delivery_attempts"),
    deliveryId: integer("delivery_id")
      .notNull()
      .references(() => webhookDeliveries.id, { onDelete: "cascade" }),
    attemptedAt: timestamp("attempted_at").notNull(),
    statusCode: integer("status_code"),
    error: text("error"),
    durationMs: integer("duration_ms").notNull(),
    /**
     * The start of the receiver's answer, as the owner's endpoint page shows it: at most 200 characters of the first
     * 1 KB (src/lib/outbound.ts, `excerptOf`); null when nothing answered or the answer was empty (docs/decisions.md,
     * The owner's dashboard).
     */
    answerExcerpt: text("answer_excerpt"),
  },
  (t) => [index("delivery_attempts_delivery").on(t.deliveryId, t.id)],
);
