import { eq, isNull, or, type SQL, sql } from "drizzle-orm";
import { events, type webhookEndpoints } from "../../db/schema";
import { type PrincipalRef, samePrincipal } from "../access/principals";
import type { ScopeValue, SqlSide } from "../access/scope";

type WebhookEndpoint = typeof webhookEndpoints.$inferSelect;

/*
 * Who could receive an event, in both of its forms, in one module: the draft's `Audience`, which picks the endpoints
 * that get a delivery (`reaches`), and its stored form, `events.audience`, written with the event (`audienceOf`)
 * and read back in SQL by the Events API (`receivableBy`), so that no partner lists another's events
 * (docs/webhooks.md, Events you were sent). The encoder and the decoder are built from the same constants below.
 */

/**
 * The receivers of an event meant for some of the business's partners only: one principal (`intake.completed` goes to
 * the principal that owns the intake: docs/guides/intakes.md, intake.completed), or one owner side (a lifecycle event:
 * the app connection `side`, or the API keys together when `side` is null; docs/architecture.md, Lifecycle events).
 */
export type Audience = { principal: PrincipalRef } | { side: number | null };

/** What an event's receivers are decided from, when not every endpoint of the business that subscribed. */
export type AddressedTo = {
  audience?: Audience;
  /** The one endpoint it goes to, whatever it subscribed to: a ping (the Test button), a partner's test event. */
  endpointId?: number;
};

/** The stored form's words and prefixes: the only place they are spelled. */
const KEYS = "keys";
const NOBODY = "none";
const KEY = "key:";
const APP = "app:";

/**
 * `events.audience`: null for every side of the business; `keys` for the API keys' side (any key of the business);
 * `key:<API key id>` for one key (its own intakes' `intake.completed`); `app:<grant id>` for one app connection;
 * `none` for nobody (a ping or test event whose endpoint was not among those read).
 */
export type StoredAudience = null | typeof KEYS | typeof NOBODY | `${typeof KEY}${number}` | `${typeof APP}${number}`;

const ofSide = (grant: number | null): StoredAudience => (grant === null ? KEYS : `${APP}${grant}`);

/** The stored form of who could receive the event. A test or ping event to one endpoint has that endpoint's side. */
export function audienceOf(draft: AddressedTo, endpoints: readonly WebhookEndpoint[]): StoredAudience {
  if (draft.endpointId !== undefined) {
    const endpoint = endpoints.find(({ id }) => id === draft.endpointId);
    return endpoint ? ofSide(endpoint.oauthGrantId) : NOBODY;
  }
  if (draft.audience === undefined) return null;
  if ("side" in draft.audience) return ofSide(draft.audience.side);
  const { apiKeyId, oauthGrantId } = draft.audience.principal;
  if (apiKeyId !== null) return `${KEY}${apiKeyId}`;
  return oauthGrantId !== null ? `${APP}${oauthGrantId}` : NOBODY;
}

/** Whether the audience lets `endpoint` get a delivery (its subscription is checked by the caller). */
export function reaches(draft: AddressedTo, endpoint: WebhookEndpoint): boolean {
  if (draft.endpointId !== undefined) return endpoint.id === draft.endpointId;
  if (draft.audience === undefined) return true;
  return "side" in draft.audience
    ? endpoint.oauthGrantId === draft.audience.side
    : samePrincipal(endpoint, draft.audience.principal);
}

/**
 * An id as the stored form spells it. The cast matters: D1 binds a JavaScript number as a REAL, and `'key:' || 3.0`
 * is `key:3.0`; an id read by a sub-select is an integer already.
 */
const idText = (prefix: string, id: ScopeValue<number> | null) => sql`${prefix} || cast(${id} as integer)`;

/**
 * The decoder, in SQL: the events whose stored audience lets the scope's principal receive them. An API key receives
 * what is for everyone, for the keys' side, and for itself; an app connection what is for everyone and for itself.
 */
export function receivableBy(scope: SqlSide): SQL | undefined {
  const { audience } = events;
  return scope.oauthGrantId === null
    ? or(isNull(audience), eq(audience, KEYS), eq(audience, idText(KEY, scope.apiKeyId)))
    : or(isNull(audience), eq(audience, idText(APP, scope.oauthGrantId)));
}
