import { type Jurisdiction, SHARDS, type ShardName } from "../db/shards";

/*
 * Durable Objects that hold a business's customer data or partner payloads (an intake conversation's answers, a
 * listening session's relayed deliveries) are created in the jurisdiction of the business's shard, as its D1 data is
 * (docs/scaling.md, Where an EU business's data lives): an object is kept in the EU only when its id comes from
 * `namespace.jurisdiction("eu")`. Every such object is addressed through `objectIn`, the one place that chooses.
 */

/**
 * The local switch: workerd (wrangler dev, the tests) does not implement jurisdictions and throws on
 * `namespace.jurisdiction()`. Set to "emulated" in .dev.vars and the tests only, and never in wrangler.toml: an
 * object of a jurisdiction is then named apart (`eu:<name>`), so that it is another object than the same name's
 * outside it, as in production.
 */
export type JurisdictionSwitch = { LOCAL_DURABLE_OBJECT_JURISDICTIONS?: string };

/** Every jurisdiction an object may be in: one of the shards', or none (`null`). */
export const JURISDICTIONS: (Jurisdiction | null)[] = [
  ...new Set(Object.values(SHARDS).map((shard) => shard.jurisdiction)),
];

export const jurisdictionOf = (shard: ShardName): Jurisdiction | null => SHARDS[shard].jurisdiction;

/** The object named `name` in `jurisdiction` (none: the namespace itself). */
export function objectIn<T extends Rpc.DurableObjectBranded | undefined>(
  namespace: DurableObjectNamespace<T>,
  jurisdiction: Jurisdiction | null,
  name: string,
  env: JurisdictionSwitch,
): DurableObjectStub<T> {
  if (jurisdiction === null) return namespace.get(namespace.idFromName(name));
  if (env.LOCAL_DURABLE_OBJECT_JURISDICTIONS === "emulated") {
    return namespace.get(namespace.idFromName(`${jurisdiction}:${name}`));
  }
  const located = namespace.jurisdiction(jurisdiction);
  return located.get(located.idFromName(name));
}

/**
 * The business a conversation's call is for and its shard, as the directory names it at the time of the call (the
 * runtime API's path, or a sandbox key's credential): a run writes in the shard its business is in when it writes,
 * never in one it remembered, so a run that spans a move completes in the new shard (docs/scaling.md, Moving a
 * business between shards).
 */
export type ConversationBusiness = { conversationId: string; businessId: string; shard: ShardName };

/** The conversation's own object, named by its id, in the jurisdiction of its business's shard (docs/architecture.md). */
export const conversationObject = <T extends Rpc.DurableObjectBranded>(
  env: { INTAKE_CONVERSATIONS: DurableObjectNamespace<T> } & JurisdictionSwitch,
  business: ConversationBusiness,
) => objectIn(env.INTAKE_CONVERSATIONS, jurisdictionOf(business.shard), business.conversationId, env);

/**
 * A listening session's id (docs/decisions.md, Listening from a laptop): 128 random bits after `ls_` and, for a
 * business of a shard in a jurisdiction, its name (`ls_eu_…`), so that the socket's route and the consumer's relay
 * address the session's object in its jurisdiction without a lookup.
 */
export const sessionIdPrefix = (shard: ShardName) => {
  const jurisdiction = jurisdictionOf(shard);
  return jurisdiction === null ? "ls_" : `ls_${jurisdiction}_`;
};

/**
 * An app's listening session (docs/decisions.md, Listening as an app) relays the events of every business connected
 * to the app, those of EU businesses among them, and of businesses that connect while it lasts: its object is in the
 * EU jurisdiction, the strictest a shard has, named as an EU business's session is (`ls_eu_…`).
 */
export const APP_SESSION_ID_PREFIX = sessionIdPrefix("eu1");

/** 22 characters of base64url: the random part of a session id. */
const SESSION_RANDOM = /^[A-Za-z0-9_-]{22}$/;

/** The jurisdiction a session id names, or undefined when it is no session id of ours. */
export function jurisdictionOfSession(sessionId: string): Jurisdiction | null | undefined {
  for (const jurisdiction of JURISDICTIONS) {
    const prefix = jurisdiction === null ? "ls_" : `ls_${jurisdiction}_`;
    if (sessionId.startsWith(prefix) && SESSION_RANDOM.test(sessionId.slice(prefix.length))) return jurisdiction;
  }
  return undefined;
}

/** The listening session's own object, in the jurisdiction its id names. */
export const sessionObject = <T extends Rpc.DurableObjectBranded>(
  env: { LISTENING_SESSIONS: DurableObjectNamespace<T> } & JurisdictionSwitch,
  sessionId: string,
) => objectIn(env.LISTENING_SESSIONS, jurisdictionOfSession(sessionId) ?? null, sessionId, env);
