import { mapRead } from "../../db/reads";
import { partnerRead, partnerWrite } from "../access/partner-operation";
import { sideOf } from "../access/scope";
import { withEndpoints } from "../webhooks/lifecycle";
import { refreshMcpServer } from "./mcp-refresh";
import { registerMcpServer } from "./mcp-registration";
import { deleteMcpServer, listMcpServers, mcpServerRow, toMcpServerObject } from "./mcp-servers";

/* What the partner API's MCP server routes run (src/routes/mcp-servers.ts, through src/admission/partner-admission.ts). */

export const listMcpServersOperation = partnerRead((side) => listMcpServers(side));

export const getMcpServerOperation = partnerRead((side, id: number) =>
  mapRead(mcpServerRow(side, id), ({ server, actions }) => toMcpServerObject(server, actions)),
);

export const createMcpServerOperation = partnerWrite({ write: registerMcpServer });

/** The server, its actions and the side's endpoints are read with the credential: a refresh makes two round trips. */
export const refreshMcpServerOperation = partnerWrite({
  read: (side, { id }: { id: number; tools?: string[] }) => withEndpoints(mcpServerRow(side, id), side),
  write: (deps, principal, { id, tools }, { record, endpoints }) =>
    refreshMcpServer(deps, principal.business.id, sideOf(principal), id, {
      offer: tools,
      loaded: { business: principal.business, endpoints, record },
    }),
});

export const deleteMcpServerOperation = partnerWrite({
  write: (deps, principal, id: number) => deleteMcpServer(deps, sideOf(principal), id),
});
