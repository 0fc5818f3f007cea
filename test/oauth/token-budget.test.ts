import { env } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { oauthCodes, oauthTokens } from "../../src/db/schema";
import {
  TOKEN_BUDGET_ERROR,
  TOKEN_REQUESTS_PER_ADDRESS_PER_MINUTE,
  TOKEN_REQUESTS_PER_MINUTE,
} from "../../src/domain/oauth/token-budget";
import { sha256Hex } from "../../src/lib/secrets";
import { countingShards } from "../helpers/counting-d1";
import { db } from "../helpers/fixtures";
import {
  authorizationCode,
  bodyCredentials,
  connectApp,
  createOwnerBusiness,
  expectOAuthError,
  postToken,
  type RegisteredClient,
  refresh,
  registerClient,
} from "../helpers/oauth";
import { awayFromWindowEdge } from "../helpers/rate-limit-window";

const shop = await createOwnerBusiness();

// Fresh clients and addresses per test: the binding's counts are shared with every other test of the runtime.
const random = () => crypto.getRandomValues(new Uint16Array(1))[0] ?? 0;
const freshIPv4 = () => `198.19.${random() % 256}.${random() % 256}`;
const from = (address: string | undefined) =>
  address === undefined ? {} : { headers: { "CF-Connecting-IP": address } };

/** A refresh with a token that is not one: refused (invalid_grant) after the client's authentication, no grant read. */
const badRefresh = (client: RegisteredClient, address?: string) =>
  postToken(
    { grant_type: "refresh_token", refresh_token: "not-a-refresh-token", ...bodyCredentials(client) },
    from(address),
  );

/** `count` requests, each answered with `status`: the budget is not spent yet. */
async function spend(count: number, request: () => Promise<Response>, status: number) {
  const statuses: number[] = [];
  for (let i = 0; i < count; i++) statuses.push((await request()).status);
  expect(statuses).toEqual(Array.from({ length: count }, () => status));
}

async function expectBudgetSpent(response: Response, description: RegExp) {
  await expectOAuthError(response, 429, TOKEN_BUDGET_ERROR, description);
  expect(response.headers.get("Retry-After")).toBe("60");
  expect(response.headers.get("RateLimit-Policy")).toBe(`"token_requests";q=${TOKEN_REQUESTS_PER_MINUTE};w=60`);
  expect(response.headers.get("RateLimit")).toBe('"token_requests";r=0;t=60');
}

const rotatedAt = async (refreshToken: string) =>
  (
    await db
      .select()
      .from(oauthTokens)
      .where(eq(oauthTokens.tokenHash, sha256Hex(refreshToken)))
      .get()
  )?.rotatedAt;

// The binding counts in minutes of the wall clock: each burst starts at least this long before a minute ends, and a
// test that waits for the next minute (at most this long) gets that time on top of its own.
const BURST_MS = 10_000;
const WINDOW_TIMEOUT = { timeout: 40_000 };

describe(`the token endpoint's budget (docs/oauth.md, Token budget: ${TOKEN_REQUESTS_PER_MINUTE} a minute per client)`, () => {
  it(
    `answers 429 past ${TOKEN_REQUESTS_PER_MINUTE} requests a minute from a client, with Retry-After, no-store and RFC 6749's body, doing nothing; another client is unaffected`,
    WINDOW_TIMEOUT,
    async () => {
      const other = await connectApp(shop);
      const client = await registerClient();
      const grant = await authorizationCode(client, shop.owner);
      await awayFromWindowEdge(BURST_MS);
      await spend(TOKEN_REQUESTS_PER_MINUTE, () => badRefresh(client), 400);
      const exchange = await postToken({
        grant_type: "authorization_code",
        code: grant.code,
        redirect_uri: grant.redirectUri,
        code_verifier: grant.verifier,
        ...bodyCredentials(client),
      });
      await expectBudgetSpent(
        exchange,
        new RegExp(`a client can make ${TOKEN_REQUESTS_PER_MINUTE} a minute\\. Retry after`),
      );
      // Refused before any work: the code was not redeemed.
      const code = await db
        .select()
        .from(oauthCodes)
        .where(eq(oauthCodes.codeHash, sha256Hex(grant.code)))
        .get();
      expect(code?.usedAt).toBeNull();
      await expect(await refresh(other.client, other.tokens.refresh_token)).toHaveStatus(200);
    },
  );

  it(
    "does not let requests that name a confidential client but fail its authentication spend its budget: they count against their address",
    WINDOW_TIMEOUT,
    async () => {
      const { client, tokens } = await connectApp(shop);
      await awayFromWindowEdge(BURST_MS);
      const address = freshIPv4();
      const refreshForm = {
        grant_type: "refresh_token",
        refresh_token: tokens.refresh_token,
        ...bodyCredentials(client),
      };
      const wrongSecret = (sender = address) =>
        postToken({ ...refreshForm, client_secret: "cs_live_not-the-secret" }, from(sender));
      await spend(TOKEN_REQUESTS_PER_MINUTE, wrongSecret, 401);
      await expectBudgetSpent(await wrongSecret(), /failed token requests from this address/);
      // Another address is not refused, and the client itself, even from that address, still has its budget.
      await expectOAuthError(await wrongSecret(freshIPv4()), 401, "invalid_client");
      const own = await postToken(refreshForm, from(address));
      await expect(own).toHaveStatus(200);
    },
  );

  it(
    "counts a public client (no secret; its installations share its id) per client and address",
    WINDOW_TIMEOUT,
    async () => {
      const { client, tokens } = await connectApp(shop, { token_endpoint_auth_method: "none" });
      await awayFromWindowEdge(BURST_MS);
      const address = freshIPv4();
      await spend(TOKEN_REQUESTS_PER_MINUTE, () => badRefresh(client, address), 400);
      await expectBudgetSpent(
        await postToken(
          { grant_type: "refresh_token", refresh_token: tokens.refresh_token, client_id: client.client_id },
          from(address),
        ),
        /a client can make \d+ a minute from one address/,
      );
      expect(await rotatedAt(tokens.refresh_token)).toBeNull();
      const elsewhere = await postToken(
        { grant_type: "refresh_token", refresh_token: tokens.refresh_token, client_id: client.client_id },
        from(freshIPv4()),
      );
      await expect(elsewhere).toHaveStatus(200);
    },
  );

  it(
    "counts requests that name no client by their address; one without CF-Connecting-IP (not from the internet) is not counted",
    WINDOW_TIMEOUT,
    async () => {
      await awayFromWindowEdge(BURST_MS);
      const address = freshIPv4();
      const anonymous = (from_: string | undefined) =>
        postToken({ grant_type: "refresh_token", refresh_token: "garbage" }, from(from_));
      await spend(TOKEN_REQUESTS_PER_MINUTE, () => anonymous(address), 401);
      await expectBudgetSpent(await anonymous(address), /from this address: at most \d+ a minute/);
      await expectOAuthError(await anonymous(freshIPv4()), 401, "invalid_client");
      await spend(TOKEN_REQUESTS_PER_MINUTE + 1, () => anonymous(undefined), 401);
    },
  );

  it(
    `counts every request of an address first, ${TOKEN_REQUESTS_PER_ADDRESS_PER_MINUTE} a minute: past it, a guess is refused before any D1 read`,
    WINDOW_TIMEOUT,
    async () => {
      const { client_id } = await registerClient();
      await awayFromWindowEdge(BURST_MS);
      const address = freshIPv4();
      // Guesses of a client secret, each for a client of its own: no client's budget is spent, only the address's.
      const guess = (clientId: string, bindings?: NonNullable<Parameters<typeof postToken>[1]>["bindings"]) =>
        postToken(
          { grant_type: "refresh_token", refresh_token: "guess", client_id: clientId, client_secret: "x" },
          { ...from(address), bindings },
        );
      const statuses: number[] = [];
      for (let i = 0; i < TOKEN_REQUESTS_PER_ADDRESS_PER_MINUTE; i++) {
        statuses.push((await guess(`cl_${crypto.randomUUID()}`)).status);
      }
      expect(statuses.every((status) => status === 401 || status === 429)).toBe(true);
      // The next guess, of a registered client's secret, is answered without reading the client.
      const { bindings, trips } = countingShards(env);
      const refused = await guess(client_id, bindings);
      await expectOAuthError(refused, 429, TOKEN_BUDGET_ERROR, /from this address: at most 300 a minute/);
      expect(refused.headers.get("Retry-After")).toBe("60");
      expect(refused.headers.get("RateLimit")).toBe('"token_requests_per_address";r=0;t=60');
      expect(trips).toEqual([]);
    },
  );
});
