import type { appDisconnectionPreview, keyRevocationPreview } from "../../domain/access/access-ending";
import type { OwnerSession } from "../../domain/access/owner-sign-in";
import {
  ActionsAndKnowledge,
  ActionsStillCalled,
  CustomerData,
  EndpointsDeleted,
  IntakesSwitchedOff,
  SwitchActionsOff,
  UrlItem,
} from "./access-ending-lists";
import { Confirmation, NamedList } from "./confirmation";
import { PasswordField } from "./fresh-sign-in";
import { Layout } from "./layout";
import { When } from "./time-text";

/*
 * The pages before the owner ends a partner's access: what will stop and what remains, seen before revoking a key or
 * disconnecting an app (docs/architecture.md, What happens when access ends), then the form that posts the
 * revocation or the disconnection itself.
 */

type KeyPreview = Awaited<ReturnType<typeof keyRevocationPreview>>;
type AppPreview = Awaited<ReturnType<typeof appDisconnectionPreview>>;

const AlreadyEnded = (props: { what: string; at: string; back: string; label: string }) => (
  <>
    <p>
      {props.what} on <When at={props.at} />: there is nothing more to stop.
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
              <ActionsStillCalled
                actions={preview.actions}
                none="No action created with API keys is switched on: the Secretary calls none of them."
                some="The Secretary calls these actions created with API keys during chats with your customers, and keeps calling them unless you switch them off below:"
              />
              <CustomerData
                actions={preview.actions}
                keepsAccess={!preview.lastActiveKey}
                who="The integration of your API keys"
              />
            </ul>
          }
          choice={
            <SwitchActionsOff
              actions={preview.actions}
              checked={preview.lastActiveKey}
              label={
                preview.lastActiveKey
                  ? "Switch off the actions created with API keys too (recommended: no key is left to run them)"
                  : "Switch off the actions created with API keys too (the other keys' integration then stops calling them)"
              }
            />
          }
          remains={
            <ActionsAndKnowledge
              records={preview}
              actionsLead="The actions created with API keys stay registered until you remove them:"
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

/** `askPassword`: the sign-in is old, so the form asks for the password (fresh-sign-in.tsx); `error`, why it came back. */
export function AppDisconnectionPage(props: {
  session: OwnerSession;
  preview: AppPreview;
  askPassword: boolean;
  error?: string;
}) {
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
              <EndpointsDeleted endpoints={preview.endpoints} lead="No webhook events are sent to it any more." />
              <ActionsStillCalled
                actions={preview.actions}
                none="The app has no action switched on: the Secretary calls none of them."
                some="The Secretary calls these actions of the app during chats with your customers, and keeps calling them unless you switch them off below:"
              />
              <CustomerData actions={preview.actions} who="The app" />
            </ul>
          }
          choice={
            <>
              <SwitchActionsOff
                actions={preview.actions}
                checked
                label="Switch off its actions too (recommended: then nothing about your customers reaches the app)"
              />
              {props.askPassword && <PasswordField error={props.error} />}
            </>
          }
          remains={
            <ActionsAndKnowledge
              records={preview}
              actionsLead="Its actions stay registered until you remove them, marked as from a disconnected app:"
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
