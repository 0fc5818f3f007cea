import { eq } from "drizzle-orm";
import { businesses } from "../../db/schema";
import type { Dependencies } from "../../dependencies";
import type { Channel } from "../../names-and-limits";
import { toBusinessObject } from "../access/businesses";
import { placedHere } from "../access/runtime-shard";
import { CALLS_PER_MESSAGE } from "../actions/call-reservation";
import { actionsForSecretary, enabledActions } from "../actions/for-secretary";
import { enabledIntakes, intakesForSecretary } from "../intakes/for-secretary";
import { secretaryKnowledge } from "../knowledge/for-secretary";
import { asPushedItems, pushedItemRows } from "../knowledge/owner-decisions";

/**
 * The rules of calling actions, in words the runtime follows (docs/decisions.md, Calls): ask the customer for a
 * missing required parameter instead of calling, consider no action on a routine reply (just a name, a number, a
 * yes), at most 2 calls a message, never on phone calls, and never promise that a lookup did anything
 * (docs/guides/connected-actions.md). On every channel, so that a phone call's context says why it has no actions.
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
 * The intake conversation): the settings, then pushed knowledge fenced as information (docs/architecture.md, Pushed
 * text stays information), the enabled actions and intakes where they run, with the rules of calling actions. One
 * round trip: the business's row, checked where it was found (`placedHere`), and all it offers, in one batch.
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
