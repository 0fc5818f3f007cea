import { eq } from "drizzle-orm";
import { businesses } from "../../db/schema";
import type { Dependencies } from "../../dependencies";
import type { Channel } from "../../names-and-limits";
import { toBusinessObject } from "../access/businesses";
import { placedHere } from "../access/runtime-shard";
import { CALLS_PER_MESSAGE } from "../actions/calls";
import { actionsForSecretary, enabledActions } from "../actions/for-secretary";
import { enabledIntakes, intakesForSecretary } from "../intakes/for-secretary";
import { secretaryKnowledge } from "../knowledge/for-secretary";
import { asPushedItems, pushedItemRows } from "../knowledge/owner-decisions";

/**
 * Spec, Connected actions ("The Secretary asks the customer for a missing required parameter instead of calling.
 * Actions are not considered on routine replies such as just a name, a phone number or a yes"), Limits and What the
 * service does, as the runtime is to follow them (docs/decisions.md, Calls). On every channel, so that a phone call's
 * context says why it has no actions. Actions are lookups: none submits, reserves or cancels anything
 * (docs/guides/connected-actions.md), so the Secretary never promises a customer that one did.
 */
const ACTION_RULES = [
  "Actions only look things up: use them to read information, never to change anything. No action submits, reserves, books, orders or cancels, so never tell the customer that an action did.",
  "Consider an action only when the customer asks for something its description covers; never on routine replies such as just a name, a phone number or a yes.",
  "When a required parameter is missing, ask the customer for it instead of calling: a call without it is refused (422) and nothing is sent.",
  `Make at most ${CALLS_PER_MESSAGE} action calls for one customer message.`,
  "Never pass an email address or a phone number as an argument: actions do not receive contact details, and such a call is rejected.",
  "Actions do not run on phone calls.",
];

/**
 * `GET /internal/v1/businesses/{id}/context?channel=C`: what the Secretary may use on channel C (docs/decisions.md,
 * The intake conversation). The settings first, then pushed knowledge marked as information, each text its own value
 * and fenced by this context's boundary token, so that no partner's text passes for an instruction (16,000 characters
 * in all: `secretaryKnowledge`; docs/architecture.md, Pushed text stays information); enabled actions where actions
 * run, with the rules of calling them in words; enabled intakes where intakes run. One round trip: the business's row,
 * checked where it was found (`placedHere`; `readsMarked` as there), and all it offers, in one batch.
 */
export async function secretaryContext(deps: Dependencies, businessId: string, channel: Channel, readsMarked: boolean) {
  const { db } = deps;
  const [[row], pushed, enabled, intakes] = await db.batch([
    db.select().from(businesses).where(eq(businesses.id, businessId)),
    pushedItemRows(db, businessId),
    enabledActions(db, businessId),
    enabledIntakes(db, businessId),
  ]);
  const business = placedHere(row, readsMarked);
  return {
    business: toBusinessObject(business),
    channel,
    knowledge: secretaryKnowledge(business, asPushedItems(pushed)),
    actions: actionsForSecretary(enabled, channel),
    action_rules: ACTION_RULES,
    intakes: intakesForSecretary(intakes, channel),
  };
}
