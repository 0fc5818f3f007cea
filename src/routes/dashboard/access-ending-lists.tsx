import type { Child } from "hono/jsx";
import type { keyRevocationPreview } from "../../domain/access/access-ending";
import { NamedList } from "./confirmation";
import { OnOff } from "./layout";

/*
 * What the pages before the owner ends a partner's access list (access-ending.tsx): what stops, what remains, and the
 * choice to switch the partner's actions off with it (docs/architecture.md, What happens when access ends).
 */

type KeyPreview = Awaited<ReturnType<typeof keyRevocationPreview>>;
type Records = Pick<KeyPreview, "intakes" | "endpoints" | "actions" | "knowledge">;

const IntakeItem = (intake: Records["intakes"][number]) => (
  <>
    {intake.title} <code>{intake.name}</code> <OnOff enabled={intake.enabled} />
  </>
);
export const UrlItem = (endpoint: { url: string }) => <code>{endpoint.url}</code>;
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
export const ActionsStillCalled = (props: { actions: Records["actions"]; none: string; some: string }) => {
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
export const SwitchActionsOff = (props: { actions: Records["actions"]; checked: boolean; label: string }) =>
  props.actions.some((action) => action.enabled) ? (
    <p data-testid="switch-actions-off">
      <label>
        <input type="checkbox" name="switch_actions_off" value="on" checked={props.checked} /> {props.label}
      </label>
    </p>
  ) : null;

/** What customer data still reaches the partner afterwards, for each choice the page offers: exactly that. */
export const CustomerData = (props: { actions: Records["actions"]; keepsAccess?: boolean; who: string }) => {
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

/** Intakes switched off by the revocation or disconnection (docs/architecture.md, What happens when access ends). */
export const IntakesSwitchedOff = (props: { intakes: Records["intakes"] }) => (
  <li>
    Its intakes are switched off, and cannot be switched on again:
    <NamedList items={props.intakes} none="it registered none." item={IntakeItem} />
  </li>
);

/**
 * Endpoints deleted with their deliveries not yet sent: the partner's access has ended, so no customer data leaves
 * for it through them (docs/architecture.md, What happens when access ends).
 */
export const EndpointsDeleted = (props: { endpoints: Records["endpoints"]; lead: string }) => (
  <li data-testid="endpoints-deleted">
    {props.lead} These webhook endpoints are removed, and the deliveries still waiting to be sent to them are not sent:
    <NamedList items={props.endpoints} none="there are none." item={UrlItem} />
  </li>
);

/**
 * What remains of any partner: its actions (registered, on or off as chosen above) and the texts it pushed, until the
 * owner removes them (docs/architecture.md, What happens when access ends).
 */
export const ActionsAndKnowledge = (props: {
  records: Records;
  actionsLead: string;
  marked?: boolean;
  children?: Child;
}) => (
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
