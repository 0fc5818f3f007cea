import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../app-env";
import { type Database, database } from "../db/client";
import type { Read } from "../db/reads";
import { assertPlanIncludesApi } from "../domain/access/businesses";
import { recordUse, useToRecord } from "../domain/access/last-use";
import { authenticateWith, type Principal, readCredential } from "../domain/access/principals";
import type { CredentialScope } from "../domain/access/scope";
import { loggableError } from "../lib/loggable-error";
import { claimIdempotencyKey } from "./idempotency";
import { spendRequestBudget } from "./principal-rate-limit";

/**
 * Every `/api/v1` call (spec: Authentication, and "When the plan lapses, calls return 403"), in this order: the
 * credential (401), the plan rule (403), the request budget (429); then a POST's `Idempotency-Key` is claimed, before
 * the handler writes (docs/idempotency.md); only then the request's own checks (400, 404).
 */
async function admit(c: Context<AppEnv>, principal: Principal): Promise<void> {
  assertPlanIncludesApi(principal.business);
  await spendRequestBudget(c, principal);
  c.set("principal", principal);
  const now = Date.now();
  if (useToRecord(principal, now)) c.executionCtx.waitUntil(recordUseQuietly(database(c.env.DB), principal, now));
  await claimIdempotencyKey(c, principal);
}

/** A failed record of use costs the overview an hour's precision, never the request: it is logged, not thrown. */
async function recordUseQuietly(db: Database, principal: Principal, now: number): Promise<void> {
  try {
    await recordUse(db, principal, now);
  } catch (error) {
    console.error(JSON.stringify({ level: "error", step: "record credential use", ...loggableError(error as Error) }));
  }
}

/**
 * The principal of a request whose handler has nothing to read before it writes (a create, a delete): the credential
 * alone, one round trip, then the plan and the budget. The write makes at most one more: a partner write costs at
 * most two round trips (docs/architecture.md, Performance budget).
 */
export async function admitted(c: Context<AppEnv>): Promise<Principal> {
  const { principal } = await authenticateWith(database(c.env.DB), c.var.credential, []);
  await admit(c, principal);
  return principal;
}

/**
 * Every partner route: the credential's shape is checked here (401 before anything else); its lookup waits for the
 * handler, which admits it either alone (`admitted`) or in the same D1 batch as its first read (`readAsPartner`).
 */
export const partnerCredential = createMiddleware<AppEnv>(async (c, next) => {
  c.set("credential", await readCredential(c.req.header("Authorization")));
  await next();
});

/**
 * The handler's first read and the credential's lookup in one D1 batch (a partner read's one round trip; a change's
 * first of two), the read scoped by sub-selects on the credential's hash. The answer is computed only once the
 * principal is admitted, so a refused credential gets its 401 (or 403, 429) and never the read's 404. A read that
 * fails while being built (a path id that is not one) is answered after the credential alone.
 */
export async function readAsPartner<T>(c: Context<AppEnv>, build: (scope: CredentialScope) => Read<T>): Promise<T> {
  const now = Date.now();
  let read: Read<T>;
  try {
    read = build({ credential: c.var.credential, now });
  } catch (error) {
    await admitted(c);
    throw error;
  }
  const { principal, results } = await authenticateWith(database(c.env.DB), c.var.credential, read.statements, now);
  await admit(c, principal);
  return read.answer(results);
}

/**
 * A validation hook for partner routes: a request the schema refuses is refused once its credential is admitted
 * (validation runs before the handler, which admits the credential of every valid request itself).
 */
export const admittedFirst =
  <R extends { success: boolean }>(hook: (result: R, c: Context) => undefined) =>
  async (result: R, c: Context<AppEnv>): Promise<undefined> => {
    if (!result.success) await admitted(c);
    return hook(result, c);
  };
