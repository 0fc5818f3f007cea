import { encodeHexLowerCase } from "@oslojs/encoding";
import { sql } from "drizzle-orm";
import { insertMany, runBatch } from "../../db/batches";
import { apiKeys, bookings, businesses, knowledgeItems, orders, owners } from "../../db/schema";
import type { ShardName } from "../../db/shards";
import type { Dependencies } from "../../dependencies";
import { tooManyRequests } from "../../lib/api-error";
import { hashPassword } from "../../lib/password";
import { refusedPerMinute } from "../../lib/rate-limit-fields";
import { randomToken } from "../../lib/secrets";
import { iso } from "../../lib/time";
import { DEFAULT_COUNTRY, type SandboxBusinessBody } from "../../schemas/sandbox";
import { newApiKey } from "../access/api-key-format";
import { listSandboxWithin } from "../access/directory";
import { priceText, SERVICES, type Service } from "./demo-data";
import { demoBookingRows, demoKnowledgeRows, demoOrderRows } from "./demo-rows";
import { sandboxRecordId } from "./record-ids";

/*
 * Sandbox businesses, self-serve (docs/decisions.md, Sandbox businesses): a partner developer makes one without an
 * account, and gets a test key and an owner's sign-in for a business full of realistic data, in the sandbox database
 * (src/db/shards.ts), never a live shard.
 */

/** Where a business is: its currency, how prices are written, its time zone (ISO 4217, IANA). */
type CountryProfile = { currency: string; symbol: string; timeZone: string };

/** A few countries' profiles; a country not listed gets the default's currency and time zone. */
const COUNTRY_PROFILES: Record<string, CountryProfile> = {
  NL: { currency: "EUR", symbol: "€", timeZone: "Europe/Amsterdam" },
  BE: { currency: "EUR", symbol: "€", timeZone: "Europe/Brussels" },
  DE: { currency: "EUR", symbol: "€", timeZone: "Europe/Berlin" },
  FR: { currency: "EUR", symbol: "€", timeZone: "Europe/Paris" },
  ES: { currency: "EUR", symbol: "€", timeZone: "Europe/Madrid" },
  IT: { currency: "EUR", symbol: "€", timeZone: "Europe/Rome" },
  IE: { currency: "EUR", symbol: "€", timeZone: "Europe/Dublin" },
  SE: { currency: "SEK", symbol: "SEK ", timeZone: "Europe/Stockholm" },
  GB: { currency: "GBP", symbol: "£", timeZone: "Europe/London" },
  US: { currency: "USD", symbol: "$", timeZone: "America/New_York" },
  CA: { currency: "CAD", symbol: "CA$", timeZone: "America/Toronto" },
  AU: { currency: "AUD", symbol: "A$", timeZone: "Australia/Sydney" },
};

/** Owners' sign-in emails of sandbox businesses: a domain of the service's own, which receives no mail. */
const SANDBOX_EMAIL_DOMAIN = "sandbox.secretary.example";

const DEFAULT_NAME = "Sandbox Hair Studio";

/** `[[ratelimits]] SANDBOX_RATE_LIMIT` in wrangler.toml: sandbox businesses made per client address and minute. */
export const SANDBOX_CREATIONS_PER_MINUTE = 10;

/**
 * Creation is open, so it is limited per client address, as OAuth registration is (src/domain/oauth/clients.ts): the
 * Rate Limiting binding, no round trip; a request without an address did not come from the internet (a service
 * binding, a test) and is not limited. Past the limit: 429 with `Retry-After` (docs/guides/sandbox.md, Budgets).
 */
export async function limitSandboxCreations(limiter: RateLimit, clientAddress: string | undefined): Promise<void> {
  if (clientAddress === undefined) return;
  const refused = await refusedPerMinute(limiter, clientAddress, "sandbox_businesses", SANDBOX_CREATIONS_PER_MINUTE);
  if (!refused) return;
  throw tooManyRequests(
    `Too many sandbox businesses from this address: at most ${SANDBOX_CREATIONS_PER_MINUTE} a minute. Keep using the one you made; it stays for 30 days after its last use.`,
    refused,
  );
}

/**
 * Sandbox businesses in use at once, across the service: with each sandbox's hourly budgets and the sandbox
 * database's short retention, what bounds that database's size (docs/guides/sandbox.md, Budgets).
 */
export const MAX_LIVE_SANDBOXES = 250;

export type SandboxBusiness = {
  business_id: string;
  api_key: string;
  owner_email: string;
  owner_password: string;
  shard: ShardName;
};

/** The owner's settings the Secretary answers from first, from the demo services in the business's currency. */
function demoSettings(symbol: string) {
  const services = Object.values(SERVICES).map(
    (service: Service) => `${service.name} ${priceText(service, symbol)} (${service.minutes} min)`,
  );
  return {
    opening_hours: "Tuesday to Saturday 09:00-18:00, Thursday until 20:00; closed Sunday and Monday",
    services: services.join(", "),
  };
}

/**
 * Creates a sandbox business in `deps.shard` (the route puts the request on the sandbox database): listed in the
 * directory first, as a sandbox, with its owner's email, unless `MAX_LIVE_SANDBOXES` are listed already (429), then in one
 * batch of the shard: the business (sandbox, Business plan, active), its owner with a generated password, one test
 * key, and the demo bookings, orders and texts (the texts as pushed by that key). Two D1 round trips in all.
 */
export async function createSandboxBusiness(deps: Dependencies, input: SandboxBusinessBody): Promise<SandboxBusiness> {
  const { db, shard } = deps;
  const now = deps.clock();
  const { country } = input;
  const profile = COUNTRY_PROFILES[country] ?? (COUNTRY_PROFILES[DEFAULT_COUNTRY] as CountryProfile);
  const name = input.name ?? DEFAULT_NAME;
  // 80 random bits: unique without a read first, as the handle's and the email's unique indexes require.
  const tag = encodeHexLowerCase(crypto.getRandomValues(new Uint8Array(10)));
  const handle = `sandbox-${tag}`;
  const businessId = crypto.randomUUID();
  const ownerEmail = `${handle}@${SANDBOX_EMAIL_DOMAIN}`;
  // 256 random bits, shown once; hashed at the production cost (src/lib/password.ts).
  const ownerPassword = randomToken("");
  const passwordHash = await hashPassword(ownerPassword);
  const key = newApiKey(shard, { test: true });
  const at = iso(now);

  if (!(await listSandboxWithin(deps.global, { businessId, ownerEmail }, MAX_LIVE_SANDBOXES, deps.clock()))) {
    throw tooManyRequests(
      `The sandbox is full: ${MAX_LIVE_SANDBOXES} sandbox businesses are in use. Try again in an hour, or keep using one you made.`,
      { policy: "live_sandboxes", quota: MAX_LIVE_SANDBOXES, windowSeconds: 3600, remaining: 0, resetInSeconds: 3600 },
    );
  }
  const demo = {
    businessId,
    handle,
    ...profile,
    now,
    idOf: (table: "bookings" | "orders", n: number) => sandboxRecordId(table, n),
  };
  const keyId = sql`(select ${apiKeys.id} from ${apiKeys} where ${apiKeys.keyHash} = ${key.keyHash})`;
  await runBatch(db, [
    db.insert(businesses).values({
      id: businessId,
      handle,
      name,
      currency: profile.currency,
      country,
      timeZone: profile.timeZone,
      plan: "business",
      planActive: true,
      settings: demoSettings(profile.symbol),
      createdAt: at,
      updatedAt: at,
      sandbox: true,
    }),
    db.insert(owners).values({ businessId, email: ownerEmail, passwordHash, createdAt: at }),
    db.insert(apiKeys).values({
      businessId,
      keyHash: key.keyHash,
      displayPrefix: key.displayPrefix,
      label: "Sandbox test key",
      createdAt: at,
    }),
    ...insertMany(db, bookings, demoBookingRows(demo)),
    ...insertMany(db, orders, demoOrderRows(demo)),
    ...insertMany(db, knowledgeItems, demoKnowledgeRows({ businessId, name, now, apiKeyId: keyId })),
  ]);
  return { business_id: businessId, api_key: key.key, owner_email: ownerEmail, owner_password: ownerPassword, shard };
}
