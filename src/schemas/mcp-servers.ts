import { z } from "@hono/zod-openapi";
import { recordId, timestamp } from "../lib/validation";

/** `POST /mcp-servers` (docs/guides/connected-actions.md, From an MCP server). */
export const CreateMcpServerBody = z
  .object({
    url: z
      .string()
      .trim()
      .max(2048)
      .openapi({ description: "The server's Streamable HTTP endpoint: a public https address" }),
    tools: z
      .array(z.string().max(64))
      .min(1)
      .max(50)
      .refine((names) => new Set(names).size === names.length, { error: "must not name a tool twice" })
      .optional()
      .openapi({
        description:
          "The tools to offer as connected actions. Omitted means every usable tool, within the business's 10 actions",
      }),
  })
  .openapi("CreateMcpServer");

/** `POST /mcp-servers/{id}/refresh`: tools to offer besides those already offered. */
export const RefreshMcpServerBody = z
  .object({
    tools: CreateMcpServerBody.shape.tools.openapi({
      description: "Tools of the server to offer now, besides those already offered",
    }),
  })
  .openapi("RefreshMcpServer");

const McpTool = z
  .object({
    name: z.string(),
    actionId: recordId.nullable().openapi({ description: "The connected action the tool is, or null when it is none" }),
    enabled: z.boolean().openapi({ description: "Whether the owner has switched its action on" }),
    reason: z.string().nullable().openapi({
      description:
        "Why the tool is not a connected action, or why its action is off because of the server (the tool changed so that it is no longer usable, or the server no longer lists it); null otherwise",
    }),
  })
  .openapi("McpTool");

export const McpServerObject = z
  .object({
    id: recordId,
    url: z.string(),
    source: z.enum(["api_key", "oauth_app"]),
    tools: z.array(McpTool),
    listedAt: timestamp.openapi({ description: "When the service last listed the server's tools" }),
    listError: z.string().nullable().openapi({
      description: "Why that listing failed, null when it succeeded: the tools are then those of the listing before",
    }),
    createdAt: timestamp,
  })
  .openapi("McpServer");

export const CreatedMcpServerObject = McpServerObject.extend({
  secret: z.string().openapi({
    description: "Shown once: it signs every request to the server, as an action's secret signs its calls",
  }),
}).openapi("CreatedMcpServer");
