import type { Dependencies } from "../../dependencies";
import { OAuthError } from "../../lib/oauth-errors";
import { requiredParameter } from "../../lib/oauth-parameters";
import type { EpochMs } from "../../lib/time";
import type { TokenResponse } from "../../schemas/oauth";
import { foundThroughForwards } from "../access/credential-forwards";
import { type AppTokenResponse, issueAppToken } from "./app-tokens";
import { authenticateWithGrant, type GrantRead, presentedCredentials } from "./client-authentication";
import { codeRead, exchangeAuthorizationCode } from "./code-exchange";
import { refreshTokenHash, refreshTokenRead, refreshTokens } from "./refresh-rotation";
import { spendAddressBudget, spendClientBudget, type TokenBudget } from "./token-budget";

/** A request refused before its client is authenticated spends its address's budget (docs/oauth.md, Token budget). */
async function refusalsSpendAddressBudget<T>(budget: TokenBudget, work: () => T | Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof OAuthError) await spendAddressBudget(budget);
    throw error;
  }
}

/**
 * Dispatches a token request by `grant_type` (RFC 6749 §4.1.3, §6), within the token endpoint's budget
 * (docs/oauth.md, Token budget): the authenticated client's, or its address's when refused before that. It runs on
 * the shard the code or token names, in two round trips: client and grant in one batch, then the grant's batch; a
 * refresh token whose business moved follows its forward.
 */
export async function tokenRequest(
  deps: Dependencies,
  budget: TokenBudget,
  authorization: string | undefined,
  form: URLSearchParams,
  now: EpochMs = deps.clock(),
): Promise<TokenResponse | AppTokenResponse> {
  const { grantType, presented } = await refusalsSpendAddressBudget(budget, () => ({
    grantType: requiredParameter(form, "grant_type"),
    presented: presentedCredentials(authorization, form),
  }));
  const authenticate = async <Row>(grantRead: GrantRead<Row> | undefined) => {
    const read = await refusalsSpendAddressBudget(budget, () => authenticateWithGrant(deps, presented, grantRead));
    await spendClientBudget(budget, read.client);
    return read;
  };
  if (grantType === "authorization_code") {
    const { client, grant } = await authenticate(codeRead(deps, form));
    return exchangeAuthorizationCode(deps, client, form, grant, now);
  }
  if (grantType === "refresh_token") {
    const { client, grant } = await authenticate(refreshTokenRead(deps, form));
    if (grant !== undefined) return refreshTokens(deps, client, form, grant, now);
    // Not in the shard it names: its business may have moved, leaving a forward (docs/scaling.md, Moving a business
    // between shards). The client is authenticated again there, where its copy moved with the connection.
    const moved = await foundThroughForwards(deps, refreshTokenHash(form), async (there) => {
      const read = await authenticateWithGrant(there, presented, refreshTokenRead(there, form));
      return read.grant === undefined ? undefined : read;
    });
    if (!moved) return refreshTokens(deps, client, form, undefined, now);
    return refreshTokens(moved.there, moved.found.client, form, moved.found.grant, now);
  }
  if (grantType === "client_credentials") {
    // On no code or token, the request runs on the legacy database, which holds the global client rows.
    const { client } = await authenticate(undefined);
    return issueAppToken(deps, client, form, now);
  }
  await authenticate(undefined);
  throw new OAuthError(
    "unsupported_grant_type",
    "grant_type must be authorization_code, refresh_token or client_credentials.",
  );
}
