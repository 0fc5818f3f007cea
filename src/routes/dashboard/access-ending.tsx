import type { Child } from "hono/jsx";
import type { appDisconnectionPreview, keyRevocationPreview } from "../../domain/access/access-ending";
import type { OwnerSession } from "../../domain/access/owner-sign-in";
import { Confirmation, NamedList } from "./confirmation";
import { Layout, OnOff } from "./layout";
import { minuteText } from "./time-text";

/*
 * The pages before the owner ends a partner's access (DESIGN.md, Principals and ownership: the owner "sees before
 * revoking a key or disconnecting an app what will stop and what remains"), then confirms with the form that posts
 * the revocation or the disconnection itself.
 */

type KeyPreview = Awaited<ReturnType<typeof keyRevocationPreview>>;
type AppPreview = Awaited<ReturnType<typeof appDisconnectionPreview>>;
type Records = Pick<KeyPreview, "intakes" | "endpoints" | "actions" | "knowledge">;

const IntakeItem = (intake: Records["intakes"][number]) => (
  <>
    {intake.title} <code>{intake.name}</code> <OnOff enabled={intake.enabled} />
  </>
);
const UrlItem = (endpoint: { url: string }) => <code>{endpoint.url}</code>;
const ActionItem = (action: Records["actions"][number]) => (
  <>
    {action.title} <code>{action.name}</code>
  </>
);
const TextItem = (item: Records["knowledge"][number]) => (
  <>
    {item.title} <code>{item.key}</code>
  </>
);

/** Intakes switched off by the revocation or disconnection: the spec's rule for both. */
const IntakesSwitchedOff = (props: { intakes: Records["intakes"] }) => (
  <li>
    Its intakes are switched off, and cannot be switched on again:
    <NamedList items={props.intakes} none="it registered none." item={IntakeItem} />
  </li>
);

/** Endpoints deleted with their deliveries not yet sent (DESIGN.md: "its access has ended"). */
const EndpointsDeleted = (props: { endpoints: Records["endpoints"]; lead: string }) => (
  <li data-testid="endpoints-deleted">
    {props.lead} These webhook endpoints are removed, and the deliveries still waiting to be sent to them are not sent:
    <NamedList items={props.endpoints} none="there are none." item={UrlItem} />
  </li>
);

/** What remains of any partner: its actions and the texts it pushed, until the owner removes them (spec). */
const ActionsAndKnowledge = (props: { records: Records; actionsLead: string; marked?: boolean; children?: Child }) => (
  <ul>
    {props.children}
    <li>
      {props.actionsLead}
      <NamedList items={props.records.actions} none="there are none." item={ActionItem} />
    </li>
    <li>
      The texts it pushed stay in your knowledge sources{props.marked && ", marked as from a disconnected app"}, until
      you remove them:
      <NamedList items={props.records.knowledge} none="it pushed none." item={TextItem} />
    </li>
  </ul>
);

const AlreadyEnded = (props: { what: string; at: string; back: string; label: string }) => (
  <>
    <p>
      {props.what} on {minuteText(props.at)}: there is nothing more to stop.
    </p>
    <p>
      <a href={props.back}>{props.label}</a>
    </p>
  </>
);

export function KeyRevocationPage(props: { session: OwnerSession; preview: KeyPreview }) {
  const { preview, session } = props;
  const { key } = preview;
  const others = preview.otherActiveKeys;
  return (
    <Layout title={`Revoke the key “${key.label}”?`} session={session}>
      <p>
        <code>{key.displayPrefix}…</code>
      </p>
      {key.revokedAt ? (
        <AlreadyEnded what="This key was revoked" at={key.revokedAt} back="/dashboard/keys" label="Back to API keys" />
      ) : (
        <Confirmation
          session={session}
          stops={
            <ul>
              <li>Every request made with this key is refused, at once.</li>
              <IntakesSwitchedOff intakes={preview.intakes} />
              {preview.lastActiveKey ? (
                <EndpointsDeleted
                  endpoints={preview.endpoints}
                  lead="This is the business's last active API key, so the endpoints created with API keys stop receiving."
                />
              ) : (
                <li data-testid="endpoints-kept">
                  {others === 1 ? "1 other active key remains" : `${others} other active keys remain`}: the webhook
                  endpoints created with API keys keep receiving events.
                </li>
              )}
            </ul>
          }
          remains={
            <ActionsAndKnowledge
              records={preview}
              actionsLead="The actions created with API keys stay until you remove them:"
            >
              {!preview.lastActiveKey && (
                <li>
                  The webhook endpoints created with API keys keep receiving events:
                  <NamedList items={preview.endpointsKept} none="there are none." item={UrlItem} />
                </li>
              )}
            </ActionsAndKnowledge>
          }
          action={`/dashboard/keys/${key.id}/revoke`}
          confirm="Revoke the key"
          back="/dashboard/keys"
        />
      )}
    </Layout>
  );
}

export function AppDisconnectionPage(props: { session: OwnerSession; preview: AppPreview }) {
  const { preview, session } = props;
  const { connection } = preview;
  return (
    <Layout title={`Disconnect ${connection.appName}?`} session={session}>
      {connection.disconnectedAt ? (
        <AlreadyEnded
          what="This app was disconnected"
          at={connection.disconnectedAt}
          back="/dashboard/apps"
          label="Back to connected apps"
        />
      ) : (
        <Confirmation
          session={session}
          stops={
            <ul>
              <li>Its access ends at once: every token it holds is refused, and it cannot refresh them.</li>
              <IntakesSwitchedOff intakes={preview.intakes} />
              <EndpointsDeleted endpoints={preview.endpoints} lead="No customer data is sent to it any more." />
            </ul>
          }
          remains={
            <ActionsAndKnowledge
              records={preview}
              actionsLead="Its actions stay until you remove them, marked as from a disconnected app:"
              marked
            />
          }
          action={`/dashboard/apps/${connection.id}/disconnect`}
          confirm={`Disconnect ${connection.appName}`}
          back="/dashboard/apps"
        />
      )}
    </Layout>
  );
}
