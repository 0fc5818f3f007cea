import type { Creator } from "../../domain/access/creators";
import { Tag } from "./layout";

/**
 * Who created an endpoint or an action (docs/architecture.md, Principals and owner sides): the business's API keys,
 * or an app, marked when the owner has disconnected it, since what it registered remains until the owner removes it
 * (docs/architecture.md, What happens when access ends). The words say it; the tag is not the only sign.
 */
export function CreatedBy(props: { creator: Creator }) {
  const { creator } = props;
  if (creator.kind === "api_keys") return <span class="muted">Added with an API key</span>;
  return (
    <span class="muted">
      Added by the app {creator.appName}
      {creator.disconnected && (
        <>
          {" "}
          <DisconnectedApp />
        </>
      )}
    </span>
  );
}

/** The mark of what a disconnected app left behind (its actions, its pushed texts). */
export const DisconnectedApp = () => <Tag good={false}>disconnected app</Tag>;
