import { z } from "@hono/zod-openapi";
import { NO_INPUT, runOperation } from "../admission/partner-admission";
import {
  createMcpServerOperation,
  deleteMcpServerOperation,
  getMcpServerOperation,
  listMcpServersOperation,
  refreshMcpServerOperation,
} from "../domain/actions/mcp-server-operations";
import { mcpServerNotFound } from "../domain/actions/mcp-servers";
import { idOrNotFound, pathId } from "../lib/validation";
import { ErrorBody, errorResponses } from "../schemas/error-body";
import {
  CreatedMcpServerObject,
  CreateMcpServerBody,
  McpServerObject,
  RefreshMcpServerBody,
} from "../schemas/mcp-servers";
import { createPartnerRouter, json, partnerRoute } from "./partner-router";

/** The path id as the domain takes it, or the server's 404 (docs/errors.md, Which answers carry which). */
const serverId = (text: string) => idOrNotFound(text, mcpServerNotFound);

const byId = { params: z.object({ id: pathId }) };
const TAGS = ["Connected actions"];

const listRoute = partnerRoute({
  method: "get",
  path: "/mcp-servers",
  operationId: "listMcpServers",
  summary: "List MCP servers",
  tags: TAGS,
  responses: {
    200: {
      description: "The MCP servers, each with its tools",
      content: json(z.object({ data: z.array(McpServerObject) })),
    },
    ...errorResponses(401, 403),
  },
});

const createRoute = partnerRoute({
  method: "post",
  path: "/mcp-servers",
  operationId: "createMcpServer",
  summary: "Register an MCP server",
  description:
    "Lists the server's tools (MCP Streamable HTTP, within 5 seconds and 16,000 bytes an answer) and makes each usable tool offered a connected action, switched off until the owner switches it on. A tool is usable when it fits the rules of an action and declares `annotations.readOnlyHint: true`. At most 10 servers per business; the actions count toward its 10.",
  tags: TAGS,
  request: { body: { required: true, content: json(CreateMcpServerBody) } },
  responses: {
    201: {
      description: "The server with its tools, and its signing secret (shown once)",
      content: json(CreatedMcpServerObject),
    },
    ...errorResponses(400, 401, 403),
  },
});

const getRoute = partnerRoute({
  method: "get",
  path: "/mcp-servers/{id}",
  operationId: "getMcpServer",
  summary: "One MCP server with its tools",
  tags: TAGS,
  request: byId,
  responses: { 200: { description: "The server", content: json(McpServerObject) }, ...errorResponses(401, 403, 404) },
});

const refreshRoute = partnerRoute({
  method: "post",
  path: "/mcp-servers/{id}/refresh",
  operationId: "refreshMcpServer",
  summary: "List an MCP server's tools again",
  description:
    "A switched-on tool whose description or parameters changed keeps running as the owner approved it until the owner accepts the change; a tool no longer listed, or no longer usable, is switched off (`action.disabled`). A new tool becomes an action only when named in `tools`. A listing that fails is answered in `listError`.",
  tags: TAGS,
  request: { ...byId, body: { required: false, content: json(RefreshMcpServerBody) } },
  responses: {
    200: { description: "The server as refreshed", content: json(McpServerObject) },
    ...errorResponses(400, 401, 403, 404),
    409: {
      description:
        "Another change of this server's actions landed at the same moment, three times over; send the refresh again",
      content: json(ErrorBody),
    },
  },
});

const deleteRoute = partnerRoute({
  method: "delete",
  path: "/mcp-servers/{id}",
  operationId: "deleteMcpServer",
  summary: "Remove an MCP server",
  tags: TAGS,
  request: byId,
  responses: {
    204: { description: "Removed, with its actions and their call history" },
    ...errorResponses(401, 403, 404),
  },
});

export const mcpServers = createPartnerRouter()
  .openapi(listRoute, (c) => runOperation(c, listMcpServersOperation, NO_INPUT, (data) => c.json({ data }, 200)))
  .openapi(createRoute, (c) =>
    runOperation(
      c,
      createMcpServerOperation,
      () => c.req.valid("json"),
      (server) => c.json(server, 201),
    ),
  )
  .openapi(getRoute, (c) =>
    runOperation(
      c,
      getMcpServerOperation,
      () => serverId(c.req.valid("param").id),
      (server) => c.json(server, 200),
    ),
  )
  .openapi(refreshRoute, (c) =>
    runOperation(
      c,
      refreshMcpServerOperation,
      () => ({ id: serverId(c.req.valid("param").id), tools: c.req.valid("json")?.tools }),
      (server) => c.json(server, 200),
    ),
  )
  .openapi(deleteRoute, (c) =>
    runOperation(
      c,
      deleteMcpServerOperation,
      () => serverId(c.req.valid("param").id),
      () => c.body(null, 204),
    ),
  );
