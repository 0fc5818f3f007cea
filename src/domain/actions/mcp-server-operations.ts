import { mapRead } from "../../db/reads";
import { partnerRead, partnerWrite } from "../access/partner-operation";
import { sideOf } from "../access/scope";
import { refreshMcpServer } from "./mcp-refresh";
import { registerMcpServer } from "./mcp-registration";
import { deleteMcpServer, listMcpServers, mcpServerRow, toMcpServerObject } from "./mcp-servers";

/* What the partner API's MCP server routes run (src/routes/mcp-servers.ts, through src/admission/partner-admission.ts). */

export const listMcpServersOperation = partnerRead((side) => listMcpServers(side));

export const getMcpServerOperation = partnerRead((side, id: number) =>
  mapRead(mcpServerRow(side, id), ({ server, actions }) => toMcpServerObject(server, actions)),
);

export const createMcpServerOperation = partnerWrite({ write: registerMcpServer });

export const refreshMcpServerOperation = partnerWrite({
  write: (deps, principal, input: { id: number; tools?: string[] }) =>
    refreshMcpServer(deps, principal.business.id, sideOf(principal), input.id, input.tools),
});

export const deleteMcpServerOperation = partnerWrite({
  write: (deps, principal, id: number) => deleteMcpServer(deps, sideOf(principal), id),
});
