import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { businesses } from "./businesses";
import { createdAt, principalColumns, shardId, timestamp } from "./columns";

/**
 * Texts pushed with `PUT /knowledge/{key}`; each key counts as one knowledge source (docs/guides/knowledge.md, Limits).
 */
export const knowledgeItems = sqliteTable(
  "knowledge_items",
  {
    businessId: text("business_id")
      .notNull()
      .references(() => businesses.id, { onDelete: "cascade" }),
    key: text("key").notNull(),
    title: text("title").notNull(),
    content: text("content").notNull(),
    /**
     * Length of `content` in characters (code points), answered as `chars` (docs/guides/knowledge.md, Pushing a text).
     */
    chars: integer("chars").notNull(),
    ...principalColumns(),
    createdAt: createdAt(),
    updatedAt: timestamp("updated_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.businessId, t.key] })],
);

export const OWNER_SOURCE_KINDS = ["pdf", "website"] as const;

/** The PDFs and websites the owner added in the dashboard; they count toward the source limit too. */
export const ownerKnowledgeSources = sqliteTable(
  "owner_knowledge_sources",
  {
    id: shardId("owner_knowledge_sources"),
    businessId: text("business_id")
      .notNull()
      .references(() => businesses.id, { onDelete: "cascade" }),
    kind: text("kind", { enum: OWNER_SOURCE_KINDS }).notNull(),
    title: text("title").notNull(),
    location: text("location").notNull(),
    createdAt: createdAt(),
  },
  (t) => [index("owner_knowledge_sources_business").on(t.businessId)],
);
