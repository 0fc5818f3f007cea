import { authenticatePartner } from "../../src/domain/access/principals";
import { db } from "./fixtures";

/** The principal of an API key, typed as one (a Principal may also be an app connection). */
export async function apiKeyPrincipal(apiKey: string) {
  const principal = await authenticatePartner(db, `Bearer ${apiKey}`);
  if (principal.kind !== "api_key") throw new Error("expected an API key principal");
  return principal;
}
