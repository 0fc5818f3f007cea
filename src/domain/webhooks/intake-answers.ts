import { and, eq, exists, isNull, ne, not, type SQL, sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import { apiKeys, events, webhookDeliveries, webhookEndpoints } from "../../db/schema";
import { forbidden } from "../../lib/api-error";
import { isSqlSide, type SqlReach } from "../access/scope";
import { receivableBy } from "./audience";

/*
 * A customer's intake answers reach only the key or app whose intake it is, through every door (docs/webhooks.md,
 * Intake answers stay with their intake). The business's API keys share one side, so that a partner rotates keys
 * without losing its endpoints (docs/decisions.md, When access ends); two rules keep the answers apart within it:
 * another key may not change, re-point or delete an endpoint through which a key's answers flow, and no key lists,
 * redelivers or recovers a delivery of an event it could not have received itself.
 */

const INTAKE_COMPLETED = "intake.completed";

/**
 * The endpoint carries the answers of another key than `apiKeyId`: it is that key's, and either subscribes to
 * `intake.completed` while that key is live (a revoked key's intakes are switched off, so none come), or still has
 * one of them pending, whose next attempt goes to whatever url the endpoint has then.
 */
function carriesAnotherKeysAnswers(db: Database, apiKeyId: number | SQL): SQL {
  const owner = webhookEndpoints.apiKeyId;
  const subscribed = sql`exists (select 1 from json_each(${webhookEndpoints.events}) where value = ${INTAKE_COMPLETED})`;
  const ownerLive = exists(
    db
      .select({ one: sql`1` })
      .from(apiKeys)
      .where(and(eq(apiKeys.id, owner), isNull(apiKeys.revokedAt))),
  );
  const answersPending = exists(
    db
      .select({ one: sql`1` })
      .from(webhookDeliveries)
      .innerJoin(events, eq(events.id, webhookDeliveries.eventId))
      .where(
        and(
          eq(webhookDeliveries.endpointId, webhookEndpoints.id),
          eq(webhookDeliveries.status, "pending"),
          eq(events.type, INTAKE_COMPLETED),
        ),
      ),
  );
  return and(ne(owner, apiKeyId), sql`(${and(subscribed, ownerLive)} or ${answersPending})`) as SQL;
}

/**
 * What a partner's change of an endpoint (its url, events, secret, or its deletion) adds to its WHERE: for an API
 * key, that the endpoint carries no other key's answers, and, when the change subscribes it to `intake.completed`,
 * that it is the key's own (an endpoint subscribed by another key would carry that key's answers to a url this one
 * chose). An app connection's side is its own alone, so it adds nothing; the owner (a business id) changes anything.
 */
export function changeableBy(db: Database, reach: SqlReach, events?: readonly string[]): SQL | undefined {
  if (!isSqlSide(reach) || reach.apiKeyId === null) return undefined;
  const apiKeyId = reach.apiKeyId as number | SQL;
  return and(
    not(carriesAnotherKeysAnswers(db, apiKeyId)),
    events?.includes(INTAKE_COMPLETED) ? eq(webhookEndpoints.apiKeyId, apiKeyId) : undefined,
  );
}

/** The 403 of a change the guard refused on an endpoint the partner sees in its list: it says why. */
export const anotherKeysAnswers = () =>
  forbidden(
    "This endpoint receives intake.completed for another API key's intakes (or has some still pending): only that key, or the business's owner, can change, re-point or delete it, or subscribe it to intake.completed.",
    "forbidden",
  );

/**
 * The deliveries a reach may list, redeliver or recover: a partner's, only those of events it could have received
 * itself (`receivableBy`, as the Events API lists them), so that an endpoint another key once received answers through
 * lists none of them to it; the owner's, every one.
 */
export function receivableDelivery(db: Database, reach: SqlReach): SQL | undefined {
  if (!isSqlSide(reach)) return undefined;
  return exists(
    db
      .select({ one: sql`1` })
      .from(events)
      .where(and(eq(events.id, webhookDeliveries.eventId), receivableBy(reach))),
  );
}
