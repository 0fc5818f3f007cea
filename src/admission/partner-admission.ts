import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../app-env";
import { nothingMore, type Read } from "../db/reads";
import type { Dependencies } from "../dependencies";
import { businessMoving } from "../domain/access/business-moving";
import { assertPlanIncludesApi } from "../domain/access/businesses";
import { recordUse, useToRecord } from "../domain/access/last-use";
import type { PartnerOperation } from "../domain/access/partner-operation";
import { authenticateWith, type Principal, principalKey, readCredential } from "../domain/access/principals";
import { tooManyRequests } from "../lib/api-error";
import { announceIgnored } from "../lib/ignored-members";
import { loggableError } from "../lib/loggable-error";
import { type BudgetUse, policyItem, rateLimitHeaders, refusedPerMinute } from "../lib/rate-limit-fields";
import { useShard } from "../middleware/request-dependencies";
import { claimIdempotencyKey } from "./idempotency";

/*
 * The one way through a partner request (docs/architecture.md, One way through a partner request). Every `/api/v1`
 * call, in this order (docs/guides/getting-started.md, A credential): the credential (401), the
 * plan rule (403), the request budget (429); then a POST's `Idempotency-Key` is claimed, before anything is written
 * (docs/idempotency.md), and a replay is answered in place of the request; only then the request's own checks (400,
 * 404) and its write.
 */

/**
 * Every partner route: the credential's shape is checked first (401 before anything else); its lookup waits. The
 * credential names its business's shard (src/db/shards.ts): the rest of the request works on that database.
 */
export const partnerCredential = createMiddleware<AppEnv>(async (c, next) => {
  const credential = await readCredential(c.req.header("Authorization"));
  c.set("credential", credential);
  useShard(c, credential.shard);
  await next();
});

/** The general budget of every partner credential: `[[ratelimits]] PRINCIPAL_RATE_LIMIT` in wrangler.toml. */
export const REQUESTS_PER_MINUTE = 600;
const WINDOW_SECONDS = 60;
const REQUESTS_POLICY = "requests";
/** The request budget as `RateLimit-Policy` states it on every answer. */
const REQUESTS_POLICY_ITEM = policyItem(REQUESTS_POLICY, REQUESTS_PER_MINUTE, WINDOW_SECONDS);

/**
 * A per-principal budget through Cloudflare's Rate Limiting binding, which answers in the same location without a
 * round trip (docs/decisions.md, Knowledge and limits). It says only yes or no, so every answer names the policy
 * (`RateLimit-Policy`) and only its 429 says where it stands (`RateLimit`, nothing left for at most the window):
 * a remainder the service does not know is not guessed (docs/rate-limits.md). Exact per-business counts live in
 * BusinessLimits, and the answers they govern state them (`announceBudget`).
 */
export async function spendRequestBudget(c: Context<AppEnv>, key: string): Promise<void> {
  const refused = await refusedPerMinute(c.env.PRINCIPAL_RATE_LIMIT, key, REQUESTS_POLICY, REQUESTS_PER_MINUTE);
  if (refused) {
    throw tooManyRequests(
      `Too many requests: a credential can make ${REQUESTS_PER_MINUTE} requests a minute.`,
      refused,
    );
  }
  c.header("RateLimit-Policy", REQUESTS_POLICY_ITEM);
}

/**
 * An answer counted against budgets of its own as well (knowledge pushes, an endpoint's sends and the business's test
 * events): their policies join the request budget's in `RateLimit-Policy`, and `RateLimit` says what is left of each.
 */
export function announceBudgets(c: Context<AppEnv>, uses: BudgetUse[]) {
  for (const use of uses) {
    for (const [name, value] of rateLimitHeaders(use)) c.header(name, value, { append: true });
  }
}

/** A failed record of use costs the overview an hour's precision, never the request: it is logged, not thrown. */
async function recordUseQuietly(deps: Dependencies, principal: Principal, now: number): Promise<void> {
  try {
    await recordUse(deps, principal, now);
  } catch (error) {
    console.error(JSON.stringify({ level: "error", step: "record credential use", ...loggableError(error as Error) }));
  }
}

/** Any method but GET and HEAD changes something. */
const writes = (c: Context<AppEnv>) => c.req.method !== "GET" && c.req.method !== "HEAD";

/**
 * Admission once the credential is found: the plan, a write while the business moves (its rows are being copied to
 * another shard: docs/scaling.md, Moving a business between shards), the budget, then the key's claim (its replay, if
 * it is one). The credential's batch has read the business's row, mark included: no round trip more.
 */
async function admit(c: Context<AppEnv>, principal: Principal): Promise<Response | undefined> {
  assertPlanIncludesApi(principal.business);
  if (principal.business.movingSince !== null && writes(c)) throw businessMoving();
  // One budget per API key, and one per app connection (all the tokens of one app and business together).
  await spendRequestBudget(c, principalKey(principal));
  c.set("principal", principal);
  const now = c.var.deps.clock();
  // A moving business's rows are being copied: its last use is recorded again after the move, at the next request.
  if (useToRecord(principal, now) && principal.business.movingSince === null) {
    c.executionCtx.waitUntil(recordUseQuietly(c.var.deps, principal, now));
  }
  return claimIdempotencyKey(c, principal);
}

/** The credential alone (one round trip), admitted: for a request refused before it reads anything. */
async function admitAlone(c: Context<AppEnv>): Promise<Response | undefined> {
  const { principal, deps } = await authenticateWith(c.var.deps, c.var.credential, []);
  c.set("deps", deps);
  return admit(c, principal);
}

/**
 * Runs `operation`: the credential's lookup and the operation's read in ONE D1 batch, admission, then the write
 * (docs/architecture.md, Performance budget), and `answer` shapes the result. The read's answer and `input` are
 * computed only once the principal is admitted, so a refused credential gets its 401 (or 403, 429), never a 404 or a
 * 400. A replay is the route's earlier answer, byte for byte, standing for its typed answer.
 */
export async function runOperation<Input, Loaded, Output, Answer>(
  c: Context<AppEnv>,
  operation: PartnerOperation<Input, Loaded, Output>,
  input: () => Input,
  answer: (value: Output, principal: Principal) => Answer,
): Promise<Answer> {
  const { credential } = c.var;
  const now = c.var.deps.clock();
  let given: Input;
  let read: Read<Loaded>;
  try {
    given = input();
    read = operation.read?.({ credential, now }, given) ?? (nothingMore as Read<Loaded>);
  } catch (error) {
    const replay = await admitAlone(c);
    if (replay) return replay as Answer;
    throw error;
  }
  // The credential's shard, or the one its forward leads to: the rest of the request works on it.
  const { principal, results, deps } = await authenticateWith(c.var.deps, credential, read.statements, now);
  c.set("deps", deps);
  const replay = await admit(c, principal);
  if (replay) return replay as Answer;
  const loaded = read.answer(results);
  const value = operation.write ? await operation.write(deps, principal, given, loaded) : (loaded as unknown as Output);
  return answer(value, principal);
}

/**
 * A validation hook for partner routes: a request the schema refuses is refused once its credential is admitted
 * (validation runs before the handler, which admits the credential of every valid request through `runOperation`).
 * A valid JSON body's members the schema does not know are ignored, and named in the answer (docs/guides/errors.md).
 */
export const admittedFirst =
  <R extends { success: boolean; target: string; data?: unknown }>(hook: (result: R, c: Context) => undefined) =>
  async (result: R, c: Context<AppEnv>): Promise<Response | undefined> => {
    if (result.success) {
      // The body as sent (a POST without one validates `{}`): hono keeps its text, so this parses it again.
      if (result.target === "json") announceIgnored(c, await c.req.json().catch(() => undefined), result.data);
      return undefined;
    }
    return (await admitAlone(c)) ?? hook(result, c);
  };

/** The input of an operation that takes none (a list without filters). */
export const NO_INPUT = (): undefined => undefined;
