import type { Dependencies } from "../../dependencies";
import { OAuthError } from "../../lib/oauth-errors";
import { requiredParameter } from "../../lib/oauth-parameters";
import type { EpochMs } from "../../lib/time";
import type { TokenResponse } from "../../schemas/oauth";
import { authenticateClient } from "./client-authentication";
import type { OAuthClient } from "./clients";
import { exchangeAuthorizationCode } from "./code-exchange";
import { refreshTokens } from "./refresh-rotation";
import { spendAddressBudget, spendClientBudget, type TokenBudget } from "./token-budget";

/**
 * Dispatches a token request by `grant_type` (RFC 6749 §4.1.3, §6; `unsupported_grant_type` otherwise), within the
 * token endpoint's budget (docs/oauth.md, Token budget): the authenticated client's, spent before any work on its
 * grant; a request refused before its client is authenticated spends its address's instead.
 */
export async function tokenRequest(
  deps: Dependencies,
  budget: TokenBudget,
  authorization: string | undefined,
  form: URLSearchParams,
  now: EpochMs = deps.clock(),
): Promise<TokenResponse> {
  let grantType: string;
  let client: OAuthClient;
  try {
    grantType = requiredParameter(form, "grant_type");
    client = await authenticateClient(deps, authorization, form);
  } catch (error) {
    if (error instanceof OAuthError) await spendAddressBudget(budget);
    throw error;
  }
  await spendClientBudget(budget, client);
  if (grantType === "authorization_code") return exchangeAuthorizationCode(deps, client, form, now);
  if (grantType === "refresh_token") return refreshTokens(deps, client, form, now);
  throw new OAuthError("unsupported_grant_type", "grant_type must be authorization_code or refresh_token.");
}
