import { and, eq, isNull, type SQL, sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import { actions, webhookEndpoints } from "../../db/schema";
import type { Dependencies } from "../../dependencies";
import { newSigningSecret, type SigningSecrets } from "../../lib/signing";
import { type EpochMs, iso } from "../../lib/time";
import { MAX_PREVIOUS_SECRET_SECONDS } from "../../names-and-limits";
import { type PrincipalSide, reached } from "../access/scope";
import { actionNotFound, mcpToolConflict } from "../actions/reads";
import { refusedChange } from "./endpoints";
import { changeableBy } from "./intake-answers";

/**
 * Secret rotation of webhook endpoints and actions (docs/webhooks.md, Rotating a secret), as Stripe's secret roll: a
 * new secret at once, and the old one still signing beside it for up to 24 hours, so that a partner swaps the secret in
 * its receiver without a moment when a request fails verification.
 */

/** What a rotated record holds of its secrets: the endpoint's or the action's columns. */
export type RotatingSecrets = {
  secret: string;
  previousSecret: string | null;
  previousSecretExpiresAt: string | null;
};

/**
 * The secrets a request made at `now` is signed with: the current one, and the previous one while it has not expired
 * (`previous_secret_expires_at` is the first instant it no longer signs, so `expires_in: 0` stops it at once).
 */
export function signingSecrets(record: RotatingSecrets, now: EpochMs): SigningSecrets {
  const { secret, previousSecret, previousSecretExpiresAt } = record;
  const previousLive =
    previousSecret !== null && previousSecretExpiresAt !== null && Date.parse(previousSecretExpiresAt) > now;
  return previousLive ? [secret, previousSecret] : [secret];
}

type RotatingTable = typeof webhookEndpoints | typeof actions;

/**
 * The rotation of `table`'s records (endpoints or actions), ONE UPDATE scoped to the partner's side: the current secret
 * becomes the previous, a new one the current (docs/decisions.md, Webhooks a partner can operate). SQLite computes each
 * SET from the old row, so concurrent rotations apply in turn and none is lost half-way. `guard`: what else the WHERE
 * holds; `refused`: the error when nothing was rotated (another side's record is a 404, as a missing one).
 */
const rotation =
  (
    table: RotatingTable,
    guard: (db: Database, scope: PrincipalSide) => SQL | undefined,
    refused: (deps: Dependencies, scope: PrincipalSide, id: number) => Promise<never>,
  ) =>
  async (
    deps: Dependencies,
    scope: PrincipalSide,
    id: number,
    expiresInSeconds = MAX_PREVIOUS_SECRET_SECONDS,
    now: EpochMs = deps.clock(),
  ) => {
    const secret = newSigningSecret();
    const [rotated] = await deps.db
      .update(table)
      .set({
        secret,
        previousSecret: sql`${table.secret}`,
        previousSecretExpiresAt: iso(now + expiresInSeconds * 1000),
      })
      .where(and(eq(table.id, id), reached(table, scope), guard(deps.db, scope)))
      .returning({ id: table.id });
    if (!rotated) return refused(deps, scope, id);
    return { secret };
  };

/** `POST /webhooks/{id}/rotate-secret`: the endpoint's new secret, shown once. */
export const rotateEndpointSecret = rotation(webhookEndpoints, changeableBy, refusedChange);

/**
 * `POST /actions/{id}/rotate-secret`: the action's new secret, shown once. A tool of an MCP server is signed with its
 * server's secret, which every request of the exchange shares, so it has none of its own to rotate (a 409).
 */
export const rotateActionSecret = rotation(
  actions,
  () => isNull(actions.mcpServerId),
  async (deps, scope, id) => {
    const [action] = await deps.db
      .select({ server: actions.mcpServerId })
      .from(actions)
      .where(and(eq(actions.id, id), reached(actions, scope)));
    if (action?.server == null) throw actionNotFound();
    throw mcpToolConflict();
  },
);
