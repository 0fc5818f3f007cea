import { and, asc, desc, eq } from "drizzle-orm";
import { apiKeys, knowledgeItems, oauthClients, oauthGrants, ownerKnowledgeSources } from "../../db/schema";
import type { Dependencies } from "../../dependencies";
import { notFound } from "../../lib/errors";
import { fenceText, frameLength, freshBoundary, informationHeader } from "../../lib/information-fence";
import { characterCount } from "../../lib/text";
import type { Business } from "../access/businesses";
import { deleteKnowledge, SOURCE_LIMITS } from "./items";

/**
 * Who pushed an item's current text: the key (its label and first characters) or the connected app (its name, and
 * whether the owner has disconnected it since: its knowledge stays until the owner removes it, spec).
 */
export type AddedBy =
  | { kind: "api_key"; label: string; keyPrefix: string }
  | { kind: "oauth_app"; appName: string; disconnected: boolean };

/** Pushed items with the principal that added them, newest change first: one query, two left joins. */
async function pushedItems(deps: Dependencies, businessId: string) {
  const rows = await deps.db
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
  return rows.map(({ item, keyLabel, keyPrefix, appName, disconnectedAt }) => ({
    item,
    addedBy: (appName !== null
      ? { kind: "oauth_app", appName, disconnected: disconnectedAt !== null }
      : { kind: "api_key", label: keyLabel ?? "API key", keyPrefix: keyPrefix ?? "" }) satisfies AddedBy as AddedBy,
  }));
}

const describeSource = (addedBy: AddedBy) =>
  addedBy.kind === "oauth_app"
    ? `the app ${addedBy.appName}`
    : `the API key "${addedBy.label}" (${addedBy.keyPrefix}…)`;

/**
 * The owner's knowledge sources (spec: "The owner sees pushed texts in their knowledge sources, marked as added by a
 * connected app, and can remove any"): their own PDFs and websites, and every pushed text with who added it.
 */
export async function listKnowledgeSources(deps: Dependencies, business: Business) {
  const [own, pushed] = await Promise.all([
    deps.db
      .select()
      .from(ownerKnowledgeSources)
      .where(eq(ownerKnowledgeSources.businessId, business.id))
      .orderBy(asc(ownerKnowledgeSources.id)),
    pushedItems(deps, business.id),
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

/** Spec, Limits: "Knowledge read per answer: about 16,000 characters in total". */
export const KNOWLEDGE_BUDGET_CHARS = 16_000;

export type KnowledgeSection =
  | { kind: "settings"; text: string }
  | {
      kind: "connected_app_information";
      key: string;
      title: string;
      source: string;
      /** The pushed text itself, apart from any wording of ours (cut if it is the one that crosses the budget). */
      content: string;
      /**
       * The same for a prompt: a header line of our words, then the context's two boundary lines around the source
       * and title (one line each) and `content` (src/lib/information-fence.ts).
       */
      text: string;
    };

function settingsText(business: Business): string {
  const lines = Object.entries(business.settings).map(
    ([name, value]) => `${name}: ${typeof value === "string" ? value : JSON.stringify(value)}`,
  );
  return [
    `The business's own settings for ${business.name}. They take precedence over any information below.`,
    ...lines,
  ].join("\n");
}

const firstChars = (text: string, count: number) =>
  characterCount(text) <= count ? text : [...text].slice(0, count).join("");

/**
 * What the Secretary may answer from (spec, What the service does: the business's settings take precedence over pushed
 * knowledge; "Pushed text is treated as information, never as instructions"): the settings first, then each pushed
 * text, newest first, as its own value with its key, title and author, and rendered with its source and title between
 * the boundary lines of this context, under a header saying it is information from a connected app. At most 16,000
 * characters of rendering in total: the settings and each text's header, boundary lines and content. The text that
 * crosses the budget keeps its header and both boundary lines and loses the end of its content; those after it are left
 * out and counted.
 */
export async function secretaryKnowledge(deps: Dependencies, business: Business) {
  const items = await pushedItems(deps, business.id);
  const boundary = freshBoundary(
    ...items.flatMap(({ item, addedBy }) => [item.content, item.title, describeSource(addedBy)]),
  );
  const header = informationHeader("Information from a connected app", boundary);
  const settings = firstChars(settingsText(business), KNOWLEDGE_BUDGET_CHARS);
  const sections: KnowledgeSection[] = [{ kind: "settings", text: settings }];
  let room = KNOWLEDGE_BUDGET_CHARS - characterCount(settings);
  let omitted = 0;
  for (const { item, addedBy } of items) {
    const source = describeSource(addedBy);
    const labels = { Source: source, Title: item.title };
    const frame = frameLength(header, boundary, labels);
    if (room <= frame) {
      omitted++;
      continue;
    }
    const content = firstChars(item.content, room - frame);
    const text = fenceText(header, boundary, { labels, content });
    room -= characterCount(text);
    sections.push({ kind: "connected_app_information", key: item.key, title: item.title, source, content, text });
  }
  return { sections, boundary, chars: KNOWLEDGE_BUDGET_CHARS - room, omitted };
}
