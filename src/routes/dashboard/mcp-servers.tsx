import type { OwnerMcpServer } from "../../domain/owner/mcp-servers";
import { CreatedBy } from "./created-by";
import { OnOff, Tag } from "./layout";
import { When } from "./time-text";

/**
 * The business's MCP servers on the owner's actions page (docs/guides/connected-actions.md, From an MCP server): each
 * server's address, who added it, when its tools were last listed and why that listing failed, then its tools in
 * words: a tool that is a connected action links to the action's page (its switch and Test), any other says why it is
 * not one. Addresses, tool names and reasons are drawn as text, never as HTML: the partner chose them.
 */
export function McpServers(props: { servers: OwnerMcpServer[] }) {
  return (
    <>
      {props.servers.map((server) => (
        <section data-testid={`mcp-server-${server.id}`}>
          <h2>
            MCP server <code>{server.url}</code>
          </h2>
          <p>
            <CreatedBy creator={server.creator} />. Tools last listed <When at={server.listedAt} />.
          </p>
          {server.listError && (
            <p class="error" data-testid={`list-error-${server.id}`}>
              That listing failed: {server.listError} The tools below are those of the last listing that answered.
            </p>
          )}
          <ul data-testid={`tools-${server.id}`}>
            {server.tools.map((tool) => (
              <li>
                <ToolLine tool={tool} />
              </li>
            ))}
          </ul>
        </section>
      ))}
    </>
  );
}

/** One tool: its action (title, name, on or off) with the reason it is off for the server's sake, or why it is none. */
function ToolLine({ tool }: { tool: OwnerMcpServer["tools"][number] }) {
  const reason = tool.reason && <span class="muted">{tool.reason}</span>;
  if (tool.actionId === null) {
    return (
      <>
        <code>{tool.name}</code> <Tag good={false}>not an action</Tag> {reason}
      </>
    );
  }
  return (
    <>
      <a href={`/dashboard/actions/${tool.actionId}`}>{tool.title}</a> <code>{tool.name}</code>{" "}
      {tool.removed ? <Tag good={false}>removed from the server</Tag> : <OnOff enabled={tool.enabled} />} {reason}
      {tool.removed && <span class="muted"> It cannot be switched on until the server lists it again.</span>}
    </>
  );
}
