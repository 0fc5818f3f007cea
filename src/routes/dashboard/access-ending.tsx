import type { Child } from "hono/jsx";
import type { appDisconnectionPreview, keyRevocationPreview } from "../../domain/access/access-ending";
import type { OwnerSession } from "../../domain/access/owner-sign-in";
import { Confirmation, NamedList } from "./confirmation";
import { Layout, OnOff } from "./layout";
import { minuteText } from "./time-text";

/*
 * The pages before the owner ends a partner's access: what will stop and what remains, seen before revoking a key or
 * disconnecting an app (docs/architecture.md, What happens when access ends), then the form that posts the
 * revocation or the disconnection itself.
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
    {action.title} <code>{action.name}</code> <OnOff enabled={action.enabled} />
  </>
);

/** What one call of the action sends the partner, in words. */
const CallItem = (action: Records["actions"][number]) => (
  <>
    {action.title} <code>{action.name}</code>: each call sends{" "}
    {action.sends.length === 0
      ? "no argument"
      : action.sends.map(({ name, description }) => `${name} (${description})`).join(", ")}
    , with your business's id and handle and the conversation's id and channel.
  </>
);

/**
 * The switched-on actions the Secretary keeps calling after the access ends unless the owner switches them off here
 * (docs/decisions.md, When access ends), and what each call sends; none said in words.
 */
const ActionsStillCalled = (props: { actions: Records["actions"]; none: string; some: string }) => {
  const on = props.actions.filter((action) => action.enabled);
  return (
    <li data-testid="actions-called">
      {on.length === 0 ? props.none : props.some}
      {on.length > 0 && <NamedList items={on} none="" item={CallItem} />}
    </li>
  );
};

/**
 * The owner's choice that goes with the confirmation: switch the actions off too. Checked by default where the
 * partner's access ends (a disconnection, the business's last key); unchecked when other keys keep the integration
 * going (a key rotation must not stop its actions). Shown only when an action is on.
 */
const SwitchActionsOff = (props: { actions: Records["actions"]; checked: boolean; label: string }) =>
  props.actions.some((action) => action.enabled) ? (
    <p data-testid="switch-actions-off">
      <label>
        <input type="checkbox" name="switch_actions_off" value="on" checked={props.checked} /> {props.label}
      </label>
    </p>
  ) : null;

/** What customer data still reaches the partner afterwards, for each choice the page offers: exactly that. */
const CustomerData = (props: { actions: Records["actions"]; keepsAccess?: boolean; who: string }) => {
  const on = props.actions.some((action) => action.enabled);
  return (
    <li data-testid="customer-data">
      {!on
        ? props.keepsAccess
          ? `${props.who} keeps receiving webhook events through the other keys; no action of it is switched on.`
          : `No customer data is sent to ${props.who.toLowerCase()} any more: no webhook events, and no action is switched on.`
        : props.keepsAccess
          ? `${props.who} keeps receiving webhook events through the other keys, and its switched-on actions keep receiving what customers ask in chats unless you switch them off below.`
          : `With its actions switched off below, no customer data is sent to ${props.who.toLowerCase()} any more. If you keep them on, they keep receiving what customers ask in chats (listed above), and nothing else: no webhook events.`}
    </li>
  );
};
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

/**
 * Endpoints deleted with their deliveries not yet sent: the partner's access has ended, so no customer data leaves
 * for it through them (docs/architecture.md, What happens when access ends).
 */
const EndpointsDeleted = (props: { endpoints: Records["endpoints"]; lead: string }) => (
  <li data-testid="endpoints-deleted">
    {props.lead} These webhook endpoints are removed, and the deliveries still waiting to be sent to them are not sent:
    <NamedList items={props.endpoints} none="there are none." item={UrlItem} />
  </li>
);

/**
 * What remains of any partner: its actions (registered, on or off as chosen above) and the texts it pushed, until the
 * owner removes them (spec).
 */
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
            <SwitchActionsOff
              actions={preview.actions}
              checked
              label="Switch off its actions too (recommended: then nothing about your customers reaches the app)"
            />
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
