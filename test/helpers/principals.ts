import { authenticatePartner } from "../../src/domain/access/principals";
import { deps } from "./dependencies";

/** The principal of an API key, typed as one (a Principal may also be an app connection). */
export async function apiKeyPrincipal(apiKey: string) {
  const principal = await authenticatePartner(deps, `Bearer ${apiKey}`);
  if (principal.kind !== "api_key") throw new Error("expected an API key principal");
  return principal;
}
