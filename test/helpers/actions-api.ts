import { eq } from "drizzle-orm";
import { actions } from "../../src/db/schema";
import { db } from "./fixtures";
import { call, json } from "./http";

// The partner API of actions (/api/v1/actions) as the files of test/actions/ call it: bodies, calls and rows.

export type Parameters = {
  type: "object";
  properties: Record<string, { type: string; description: string; enum?: unknown[] }>;
  required?: string[];
};
export type Action = {
  id: number;
  name: string;
  title: string;
  description: string;
  url: string;
  parameters: Parameters;
  enabled: boolean;
  source: string;
  failureCount: number;
  lastCalledAt: string | null;
  lastSuccessAt: string | null;
  lastFailureAt: string | null;
  createdAt: string;
  updatedAt: string;
};
export type Created = Action & { secret: string };
export type WithCalls = Action & { calls: Record<string, unknown>[] };

export const ACTION_FIELDS = [
  "changePending",
  "createdAt",
  "description",
  "enabled",
  "failureCount",
  "id",
  "lastCalledAt",
  "lastFailureAt",
  "lastSuccessAt",
  "mcpServerId",
  "name",
  "parameters",
  "source",
  "title",
  "updatedAt",
  "url",
];
// `whsec_` + 32 random bytes in standard base64, the form Standard Webhooks libraries decode (docs/webhooks.md, The
// signatures).
export const SECRET = /^whsec_[A-Za-z0-9+/]{43}=$/;
export const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
export const ACTION_URL = "https://partner.example/actions/check-slots";
export const DESCRIPTION =
  "Checks which appointment slots are free on a given day, for customers asking about availability.";
export const PARAMETERS: Parameters = {
  type: "object",
  properties: {
    date: { type: "string", description: "The day to check, YYYY-MM-DD" },
    party_size: { type: "integer", description: "How many people come", enum: [1, 2, 3, 4] },
    budget: { type: "number", description: "The most the customer will pay" },
    vegan: { type: "boolean", description: "Whether only vegan dishes count" },
    area: { type: "string", description: "The part of town", enum: ["north", "south"] },
  },
  required: ["date", "party_size"],
};
export const NO_PARAMETERS = { type: "object", properties: {}, required: [] };
export const NOT_FOUND = "No action with that id exists for this business.";
export const LIMIT_SENTENCE = "A business can have at most 10 connected actions: delete one before adding another.";
export const PRIVATE = "must be a public address, not a private, loopback or reserved one";

let counter = 0;
export const uniqueName = (prefix = "action") => `${prefix}_${(counter++).toString(36)}`;
export const validBody = (overrides: Record<string, unknown> = {}) => ({
  name: uniqueName(),
  title: "Check free slots",
  description: DESCRIPTION,
  url: ACTION_URL,
  parameters: PARAMETERS,
  ...overrides,
});

export const post = (key: string | undefined, body: unknown) => call("/api/v1/actions", { key, method: "POST", body });
export const list = (key: string | undefined) => call("/api/v1/actions", { key });
export const getOne = (key: string | undefined, id: number | string) => call(`/api/v1/actions/${id}`, { key });
export const patch = (key: string | undefined, id: number | string, body: unknown) =>
  call(`/api/v1/actions/${id}`, { key, method: "PATCH", body });
export const remove = (key: string | undefined, id: number | string) =>
  call(`/api/v1/actions/${id}`, { key, method: "DELETE" });

export async function create(key: string, overrides: Record<string, unknown> = {}) {
  const response = await post(key, validBody(overrides));
  if (response.status !== 201) throw new Error(`create failed: ${response.status} ${await response.text()}`);
  return json<Created>(response);
}

export const rowOf = (id: number) => db.select().from(actions).where(eq(actions.id, id)).get();
export const rowsOfBusiness = (businessId: string) =>
  db.select().from(actions).where(eq(actions.businessId, businessId));

/** A POST through the Worker with the production outbound policy (ALLOW_LOOPBACK_URLS unset). */
export const postInProduction = (key: string, body: unknown) =>
  call("/api/v1/actions", { key, method: "POST", body, bindings: { ALLOW_LOOPBACK_URLS: "" } });
