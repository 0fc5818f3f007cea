import type { BusinessLimits } from "./durable-objects/business-limits";
import type { IntakeConversation } from "./durable-objects/intake-conversation";
import type { ListeningSession } from "./durable-objects/listening-session";
import type { SignInThrottle } from "./durable-objects/sign-in-throttle";
import type { DeliveryMessage } from "./queues/delivery-message";

/** The Worker's bindings, as declared in wrangler.toml (and .dev.vars for local secrets). */
export interface Env {
  /** The global database, which is also the legacy shard; and the regional shards (src/db/shards.ts). */
  DB: D1Database;
  SHARD_EU1: D1Database;
  SHARD_SANDBOX: D1Database;
  SHARD_US1: D1Database;
  BUSINESS_LIMITS: DurableObjectNamespace<BusinessLimits>;
  INTAKE_CONVERSATIONS: DurableObjectNamespace<IntakeConversation>;
  LISTENING_SESSIONS: DurableObjectNamespace<ListeningSession>;
  SIGN_IN_THROTTLE: DurableObjectNamespace<SignInThrottle>;
  WEBHOOK_DELIVERIES: Queue<DeliveryMessage>;
  PRINCIPAL_RATE_LIMIT: RateLimit;
  REGISTRATION_RATE_LIMIT: RateLimit;
  TOKEN_RATE_LIMIT: RateLimit;
  TOKEN_ADDRESS_RATE_LIMIT: RateLimit;
  SANDBOX_RATE_LIMIT: RateLimit;
  /** Static files (assets/): the API reference's script, read by the /docs route only. */
  ASSETS: Fetcher;
  SERVICE_NAME: string;
  BASE_URL: string;
  /**
   * "true" only in local development and tests, where webhook and action URLs may be loopback addresses; production
   * never sets it, so outbound calls reach public addresses only (docs/architecture.md, Outbound calls).
   */
  ALLOW_LOOPBACK_URLS: string;
  DOH_RESOLVER_URL: string;
  /**
   * "emulated" only in local development and tests, where workerd does not implement Durable Object jurisdictions;
   * production never sets it (src/durable-objects/jurisdictions.ts).
   */
  LOCAL_DURABLE_OBJECT_JURISDICTIONS?: string;
  /** Secret: the Secretary runtime's bearer token for `/internal/v1`. */
  RUNTIME_TOKEN: string;
  /** Secret, set only while `RUNTIME_TOKEN` is rotated: the token before it, still accepted (docs/operations.md). */
  RUNTIME_TOKEN_PREVIOUS?: string;
  /** Secret: the operators' bearer token for moving a business between shards, and nothing else (docs/operations.md). */
  OPERATOR_TOKEN: string;
  /** Secret, set only while `OPERATOR_TOKEN` is rotated: the token before it, still accepted (docs/operations.md). */
  OPERATOR_TOKEN_PREVIOUS?: string;
}

// The runtime's own name for the bindings, so that Durable Objects and entrypoints typed with the default
// `Cloudflare.Env` (and test helpers such as runInDurableObject) see the same bindings.
declare global {
  namespace Cloudflare {
    interface Env extends WorkerBindings {}
  }
}
type WorkerBindings = Env;
