import { LEGACY_SHARD, type ShardName, shardOfSecret } from "../../db/shards";

/**
 * Codes, access and refresh tokens: a prefix, the business's shard and `_` (none for a legacy business), then 32
 * random bytes in base64url. Distinct prefixes let a credential be told by its shape before any query (docs/oauth.md,
 * Decisions); the shard lets the token and revocation endpoints find the connection's database (docs/scaling.md, How a
 * request finds its shard).
 */
export const AUTHORIZATION_CODE_PREFIX = "ac_";
export const ACCESS_TOKEN_PREFIX = "at_live_";
export const REFRESH_TOKEN_PREFIX = "rt_live_";

/** The shard an access or refresh token names, or undefined for a string that is neither. */
export const shardOfToken = (token: string): ShardName | undefined =>
  shardOfSecret(ACCESS_TOKEN_PREFIX, token) ?? shardOfSecret(REFRESH_TOKEN_PREFIX, token);

/**
 * The shard a token request's grant names (RFC 6749 §4.1.3, §6): its code's, or its refresh token's. A grant that
 * names none of ours is taken to the legacy shard, where the exchange refuses it as invalid.
 */
export function shardOfTokenRequest(form: URLSearchParams): ShardName {
  const shard =
    form.get("grant_type") === "refresh_token"
      ? shardOfSecret(REFRESH_TOKEN_PREFIX, form.get("refresh_token") ?? "")
      : shardOfSecret(AUTHORIZATION_CODE_PREFIX, form.get("code") ?? "");
  return shard ?? LEGACY_SHARD;
}

/** The shard of the token a revocation request names (RFC 7009 §2.1); one that is no token of ours changes nothing. */
export const shardOfRevocation = (parameters: URLSearchParams): ShardName =>
  shardOfToken(parameters.get("token") ?? "") ?? LEGACY_SHARD;
