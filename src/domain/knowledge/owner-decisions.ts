import { and, asc, desc, eq } from "drizzle-orm";
import type { ShardDatabase } from "../../db/client";
import { apiKeys, knowledgeItems, oauthClients, oauthGrants, ownerKnowledgeSources } from "../../db/schema";
import type { Dependencies } from "../../dependencies";
import { notFound } from "../../lib/api-error";
import type { Business } from "../access/businesses";
import { deleteKnowledge, SOURCE_LIMITS } from "./registration";

/*
 * The owner's side of knowledge: their knowledge sources for the dashboard, each pushed text with who added it, and
 * removing any of them. Scoped by the business alone, never by a partner principal (docs/architecture.md, Principals
 * and owner sides).
 */

/**
 * Who pushed an item's current text: the key (its label and first characters) or the connected app (its name, and
 * whether the owner has disconnected it since: its knowledge stays until the owner removes it; docs/guides/oauth.md,
 * When the owner disconnects).
 */
export type AddedBy =
  | { kind: "api_key"; label: string; keyPrefix: string }
  | { kind: "oauth_app"; appName: string; disconnected: boolean };

/** Pushed items with the principal that added them, newest change first: one query, two left joins. */
export const pushedItemRows = (db: ShardDatabase, businessId: string) =>
  db
    .select({
      item: knowledgeItems,
      keyLabel: apiKeys.label,
      keyPrefix: apiKeys.displayPrefix,
      appName: oauthClients.clientName,
      disconnectedAt: oauthGrants.revokedAt,
    })
    .from(knowledgeItems)
    .leftJoin(apiKeys, eq(apiKeys.id, knowledgeItems.apiKeyId))
    .leftJoin(oauthGrants, eq(oauthGrants.id, knowledgeItems.oauthGrantId))
    .leftJoin(oauthClients, eq(oauthClients.id, oauthGrants.clientId))
    .where(eq(knowledgeItems.businessId, businessId))
    .orderBy(desc(knowledgeItems.updatedAt), asc(knowledgeItems.key));

export type PushedItem = { item: typeof knowledgeItems.$inferSelect; addedBy: AddedBy };

/** Each of `pushedItemRows` with who added it. */
export const asPushedItems = (rows: Awaited<ReturnType<typeof pushedItemRows>>): PushedItem[] =>
  rows.map(({ item, keyLabel, keyPrefix, appName, disconnectedAt }) => ({
    item,
    addedBy:
      appName !== null
        ? { kind: "oauth_app", appName, disconnected: disconnectedAt !== null }
        : { kind: "api_key", label: keyLabel ?? "API key", keyPrefix: keyPrefix ?? "" },
  }));

export const describeSource = (addedBy: AddedBy) =>
  addedBy.kind === "oauth_app"
    ? `the app ${addedBy.appName}`
    : `the API key "${addedBy.label}" (${addedBy.keyPrefix}…)`;

/**
 * The owner's knowledge sources, each pushed text with who added it, any of which the owner can remove
 * (docs/guides/knowledge.md, What the Secretary reads), beside their own PDFs and websites.
 */
export async function listKnowledgeSources(deps: Dependencies, business: Business) {
  const [own, pushed] = await Promise.all([
    deps.db
      .select()
      .from(ownerKnowledgeSources)
      .where(eq(ownerKnowledgeSources.businessId, business.id))
      .orderBy(asc(ownerKnowledgeSources.id)),
    pushedItemRows(deps.db, business.id).then(asPushedItems),
  ]);
  return {
    limit: SOURCE_LIMITS[business.plan],
    used: own.length + pushed.length,
    own: own.map(({ id, kind, title, location, createdAt }) => ({ id, kind, title, location, createdAt })),
    pushed: pushed.map(({ item, addedBy }) => ({
      key: item.key,
      title: item.title,
      chars: item.chars,
      updatedAt: item.updatedAt,
      addedBy,
      addedByText: `Added by a connected app: ${describeSource(addedBy)}`,
    })),
  };
}

/** The owner removes a pushed text (by key) or one of their own sources (by id). */
export async function removeKnowledgeSource(
  deps: Dependencies,
  businessId: string,
  source: { pushedKey: string } | { ownSourceId: number },
) {
  if ("pushedKey" in source) return deleteKnowledge(deps, businessId, source.pushedKey);
  const removed = await deps.db
    .delete(ownerKnowledgeSources)
    .where(and(eq(ownerKnowledgeSources.id, source.ownSourceId), eq(ownerKnowledgeSources.businessId, businessId)))
    .returning({ id: ownerKnowledgeSources.id });
  if (removed.length === 0) throw notFound("No knowledge source with that id exists for this business.");
}
