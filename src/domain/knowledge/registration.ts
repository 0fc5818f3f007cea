import { and, asc, eq, sql } from "drizzle-orm";
import { isUniqueViolation } from "../../db/d1-failures";
import { insertWithinLimit, rowsOfBusiness } from "../../db/insert-within-limit";
import { type Read, read, runRead } from "../../db/reads";
import { knowledgeItems, ownerKnowledgeSources } from "../../db/schema";
import { type ShapedArgument, statement } from "../../db/statements";
import type { Dependencies } from "../../dependencies";
import { ApiError, forbidden, invalid, notFound, tooManyRequests } from "../../lib/api-error";
import { budgetUse } from "../../lib/rate-limit-fields";
import { characterCount } from "../../lib/text";
import { HOUR_MS, iso } from "../../lib/time";
import type { Business } from "../access/businesses";
import { type Principal, principalRef } from "../access/principals";
import { businessOf, type Reach, reachArgument, type SqlReach } from "../access/scope";

/*
 * The partner's side of knowledge: pushing a text under a key (creating or replacing it), listing and deleting the
 * business's pushed items. What the owner sees and removes is in owner-decisions.ts, what the Secretary reads in
 * for-secretary.ts.
 */

/** Knowledge sources per plan, the owner's PDFs and websites counted (docs/guides/knowledge.md, Limits). */
export const SOURCE_LIMITS = { free: 0, pro: 3, business: 5 } as const;

/**
 * 120 pushes per business a clock hour (docs/guides/knowledge.md, Limits; docs/decisions.md, Knowledge and limits).
 */
export const PUSHES_PER_HOUR = 120;

export type KnowledgeItem = typeof knowledgeItems.$inferSelect;

/**
 * An item: `key`, `title`, `chars`, `updatedAt`, `createdAt`, in camelCase (docs/guides/knowledge.md, Pushing a text).
 */
export function toKnowledgeObject(item: KnowledgeItem) {
  return { key: item.key, title: item.title, chars: item.chars, updatedAt: item.updatedAt, createdAt: item.createdAt };
}

/** Counts one push against the business's hourly budget, in its BusinessLimits object; 429 beyond it. */
export async function takeKnowledgePush(deps: Dependencies, businessId: string) {
  const { limits: namespace } = deps;
  const limits = namespace.get(namespace.idFromName(businessId));
  const use = await limits.take("knowledge_push", PUSHES_PER_HOUR, HOUR_MS, deps.clock());
  const budget = budgetUse("knowledge_pushes", PUSHES_PER_HOUR, HOUR_MS / 1000, use);
  if (!use.allowed) {
    throw tooManyRequests(
      `A business can receive at most ${PUSHES_PER_HOUR} knowledge pushes an hour; try again when the hour is up.`,
      budget,
    );
  }
  return budget;
}

const itemOf = (businessId: string, key: string) =>
  and(eq(knowledgeItems.businessId, businessId), eq(knowledgeItems.key, key));

const itemUnder = statement<{ reach: ShapedArgument<SqlReach>; key: string }>()((db, { reach, key }) =>
  db
    .select()
    .from(knowledgeItems)
    .where(and(eq(knowledgeItems.businessId, businessOf(reach)), eq(knowledgeItems.key, key))),
);

/** What is stored under `key`, if anything: read with the credential by a push (one round trip for both). */
export const storedItem = (reach: Reach, key: string): Read<KnowledgeItem | undefined> =>
  read(itemUnder({ reach: reachArgument(reach), key }), ([item]) => item);

/** `content` is 20 to 8,000 characters: shorter a 400, longer a 413 (docs/guides/knowledge.md, Pushing a text). */
export function checkContentLength(content: string): void {
  const chars = characterCount(content);
  const length = `${chars} character${chars === 1 ? "" : "s"} long`;
  if (chars > 8000) {
    throw new ApiError(
      "content_too_long",
      `The field "content" is ${length}; knowledge content can be at most 8,000.`,
      { param: "content" },
    );
  }
  if (chars < 20) {
    throw invalid(`The field "content" is ${length}; knowledge content must be at least 20.`, "content");
  }
}

/**
 * A push (docs/guides/knowledge.md, Pushing a text): the content's length, then the hourly budget (every push counts,
 * replacements too), then the store. `existing` is what the request read under the key with its credential.
 * Answers what was stored and the budget left, for the RateLimit headers.
 */
export async function pushKnowledge(
  deps: Dependencies,
  principal: Principal,
  key: string,
  input: { title: string; content: string },
  existing: KnowledgeItem | undefined,
) {
  checkContentLength(input.content);
  const budget = await takeKnowledgePush(deps, principal.business.id);
  return { ...(await storeKnowledge(deps, principal, key, input, existing)), budget };
}

/**
 * `PUT /knowledge/{key}` creates (201) or replaces (200); replacing a key works even at the source limit, and a new key
 * beyond it is a 403 (docs/guides/knowledge.md, Limits). A push that changes nothing
 * writes nothing and says `unchanged: true`. The count and the insert are one transaction, so concurrent pushes of
 * new keys never pass the limit. One write in the usual case; a push that raced another on the same key reads again.
 */
async function storeKnowledge(
  deps: Dependencies,
  principal: Principal,
  key: string,
  input: { title: string; content: string },
  existing: KnowledgeItem | undefined,
): Promise<{ created: boolean; item: ReturnType<typeof toKnowledgeObject> & { unchanged: boolean } }> {
  const { db } = deps;
  const { business } = principal;
  const now = iso(deps.clock());
  if (existing) {
    if (existing.title === input.title && existing.content === input.content) {
      return { created: false, item: { ...toKnowledgeObject(existing), unchanged: true } };
    }
    // A replace records its principal as the author of the current text, whom the owner's list and the Secretary's
    // context name (docs/architecture.md, Principals and owner sides).
    const [updated] = await db
      .update(knowledgeItems)
      .set({ ...input, chars: characterCount(input.content), updatedAt: now, ...principalRef(principal) })
      .where(itemOf(business.id, key))
      .returning();
    if (updated) return { created: false, item: { ...toKnowledgeObject(updated), unchanged: false } };
  }
  const inserted = await insertNewItem(deps, business, {
    businessId: business.id,
    key,
    ...input,
    chars: characterCount(input.content),
    ...principalRef(principal),
    createdAt: now,
    updatedAt: now,
  });
  // A concurrent push created the same key first: this push is a replacement of it.
  if (inserted === "exists") {
    return storeKnowledge(deps, principal, key, input, await runRead(db, storedItem(business.id, key)));
  }
  return { created: true, item: { ...toKnowledgeObject(inserted), unchanged: false } };
}

async function insertNewItem(deps: Dependencies, business: Business, row: typeof knowledgeItems.$inferInsert) {
  const limit = SOURCE_LIMITS[business.plan];
  try {
    const item = await insertWithinLimit(deps.db, knowledgeItems, row, limit, sourcesOf(business.id));
    if (item) return item;
  } catch (error) {
    if (isUniqueViolation(error)) return "exists" as const;
    throw error;
  }
  throw forbidden(
    `The ${business.plan === "business" ? "Business" : "Pro"} plan allows ${limit} knowledge sources, counting the owner's own PDFs and websites; delete a key or ask the owner to remove a source before adding a new key.`,
    "limit_reached",
  );
}

/**
 * Every knowledge source of a business: the owner's own PDFs and websites, and each pushed key
 * (docs/guides/knowledge.md, Limits).
 */
const sourcesOf = (businessId: string) =>
  sql`${rowsOfBusiness(knowledgeItems, businessId)} + ${rowsOfBusiness(ownerKnowledgeSources, businessId)}`;

const itemsOf = statement<{ reach: ShapedArgument<SqlReach> }>()((db, { reach }) =>
  db
    .select()
    .from(knowledgeItems)
    .where(eq(knowledgeItems.businessId, businessOf(reach)))
    .orderBy(asc(knowledgeItems.key)),
);

export const listKnowledge = (reach: Reach) =>
  read(itemsOf({ reach: reachArgument(reach) }), (items) => items.map(toKnowledgeObject));

export async function deleteKnowledge(deps: Dependencies, businessId: string, key: string) {
  const deleted = await deps.db
    .delete(knowledgeItems)
    .where(itemOf(businessId, key))
    .returning({ key: knowledgeItems.key });
  if (deleted.length === 0) throw notFound("Nothing is stored under that knowledge key for this business.");
}
