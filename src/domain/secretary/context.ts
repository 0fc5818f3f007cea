import { eq } from "drizzle-orm";
import type { Database } from "../../db/client";
import { businesses } from "../../db/schema";
import { notFound } from "../../lib/errors";
import { toBusinessObject } from "../access/businesses";
import { actionsForSecretary } from "../actions/registration";
import { intakesForSecretary } from "../intakes/registration";
import { secretaryKnowledge } from "../knowledge/sources";
import type { Channel } from "./channels";

/**
 * DESIGN.md, `GET /internal/v1/businesses/{id}/context?channel=C`: what the Secretary may use on channel C. The
 * settings first, then pushed knowledge marked as information (16,000 characters in all); enabled actions where
 * actions run; enabled intakes where intakes run.
 */
export async function secretaryContext(db: Database, businessId: string, channel: Channel) {
  const business = await db.select().from(businesses).where(eq(businesses.id, businessId)).get();
  if (!business) throw notFound("No business has that id.");
  const [knowledge, actions, intakes] = await Promise.all([
    secretaryKnowledge(db, business),
    actionsForSecretary(db, businessId, channel),
    intakesForSecretary(db, businessId, channel),
  ]);
  return { business: toBusinessObject(business), channel, knowledge, actions, intakes };
}
