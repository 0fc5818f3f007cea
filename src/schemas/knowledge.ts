import { z } from "@hono/zod-openapi";
import { timestamp, visibleText } from "../lib/validation";

/** A key: 1 to 80 of letters, digits, `.` `_` `:` `-`, starting with a letter or digit (docs/guides/knowledge.md). */
export const KnowledgeKey = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,79}$/, {
    error:
      "must be 1 to 80 characters of letters, digits, dots, underscores, colons and hyphens, starting with a letter or digit",
  })
  .openapi({ param: { name: "key", in: "path" }, example: "menu:winter-2026" });

/**
 * `{ title, content }` (docs/guides/knowledge.md, Pushing a text); the domain checks `content`'s length in characters
 * (over 8,000 is a 413). The title is shown to the owner: one line, nothing hidden. `content` is read by the
 * Secretary alone, fenced, and taken as sent (docs/security.md, "Partner text").
 */
export const PushKnowledgeBody = z
  .object({
    title: z
      .string()
      .min(1)
      .max(200)
      .superRefine(visibleText({ lines: false })),
    content: z.string().openapi({ description: "Plain text, 20 to 8,000 characters", minLength: 20, maxLength: 8000 }),
  })
  .openapi("PushKnowledge");

const KnowledgeFields = {
  key: z.string(),
  title: z.string(),
  chars: z.number().int().openapi({ description: "Length of the stored content, in characters" }),
  updatedAt: timestamp,
  createdAt: timestamp,
};

export const KnowledgeItemObject = z.object(KnowledgeFields).openapi("KnowledgeItem");

export const PushedKnowledgeObject = z
  .object({ ...KnowledgeFields, unchanged: z.boolean().openapi({ description: "True when the push changed nothing" }) })
  .openapi("PushedKnowledgeItem");
