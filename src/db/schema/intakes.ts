import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { businesses } from "./businesses";
import { createdAt, flag, principalColumns, shardId, timestamp } from "./columns";

export type IntakeField = {
  id: string;
  label: string;
  type: "text" | "textarea" | "number" | "email" | "phone" | "date" | "select";
  required: boolean;
  options?: string[];
  help?: string;
};

/** What the owner approves: compared question by question after a PATCH (docs/intakes.md, The change list). */
export type IntakeContent = { title: string; description: string; fields: IntakeField[] };

export const intakes = sqliteTable(
  "intakes",
  {
    id: shardId("intakes"),
    businessId: text("business_id")
      .notNull()
      .references(() => businesses.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    title: text("title").notNull(),
    description: text("description").notNull(),
    fields: text("fields", { mode: "json" }).$type<IntakeField[]>().notNull(),
    enabled: flag("enabled").notNull().default(false),
    /** Incremented by every real change; a conversation completes only at the version it started with. */
    version: integer("version").notNull().default(1),
    approvedVersion: integer("approved_version"),
    approvedContent: text("approved_content", { mode: "json" }).$type<IntakeContent>(),
    /** The owning principal: intakes are never shared between keys or apps (docs/intakes.md, Ownership). */
    ...principalColumns(),
    createdAt: createdAt(),
    updatedAt: timestamp("updated_at").notNull(),
  },
  (t) => [
    uniqueIndex("intakes_business_name").on(t.businessId, t.name),
    index("intakes_api_key").on(t.apiKeyId),
    index("intakes_oauth_grant").on(t.oauthGrantId),
  ],
);

export type Answer = {
  id: string;
  label: string;
  type: IntakeField["type"];
  value: string;
  proof?: "verified" | "stated";
};

export const intakeResponses = sqliteTable(
  "intake_responses",
  {
    id: shardId("intake_responses"),
    intakeId: integer("intake_id")
      .notNull()
      .references(() => intakes.id, { onDelete: "cascade" }),
    businessId: text("business_id").notNull(),
    conversationId: text("conversation_id").notNull(),
    channel: text("channel").notNull(),
    /** Identifies one run of an intake in a conversation, so that completion is stored exactly once. */
    runId: text("run_id").notNull(),
    answers: text("answers", { mode: "json" }).$type<Answer[]>().notNull(),
    status: text("status", { enum: ["completed"] }).notNull(),
    completedAt: timestamp("completed_at").notNull(),
    createdAt: createdAt(),
  },
  (t) => [index("intake_responses_intake").on(t.intakeId, t.id), uniqueIndex("intake_responses_run").on(t.runId)],
);
