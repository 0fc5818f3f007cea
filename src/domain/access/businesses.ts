import { and, eq, isNull } from "drizzle-orm";
import { businesses, type Plan } from "../../db/schema";
import type { Dependencies } from "../../dependencies";
import { forbidden } from "../../lib/api-error";
import { iso } from "../../lib/time";
import type { BusinessObject } from "../../schemas/business";
import { placedHere } from "./runtime-shard";

export type Business = typeof businesses.$inferSelect;

/**
 * The business of `GET /me`: exactly these five fields (docs/guides/getting-started.md, The first call), and
 * `sandbox: true` on a sandbox business only, which a live business's answer never shows.
 */
export function toBusinessObject(business: Business): BusinessObject {
  return {
    id: business.id,
    handle: business.handle,
    name: business.name,
    currency: business.currency,
    country: business.country,
    ...(business.sandbox ? { sandbox: true as const } : {}),
  };
}

/**
 * The one plan rule: the API needs the Pro or Business plan, active; otherwise every call is a 403 until it is again
 * (docs/guides/getting-started.md, A credential). What stands in the way of the API (and of connecting apps), or
 * undefined when nothing does.
 */
export function planRefusal(business: Pick<Business, "plan" | "planActive">): "not_included" | "lapsed" | undefined {
  if (business.plan === "free") return "not_included";
  if (!business.planActive) return "lapsed";
  return undefined;
}

export function assertPlanIncludesApi(business: Business): void {
  const refusal = planRefusal(business);
  if (refusal === "not_included") {
    throw forbidden(
      "The business's plan does not include the API: it needs the Pro or Business plan.",
      "plan_required",
    );
  }
  if (refusal === "lapsed") {
    throw forbidden("The business's plan has lapsed: the API works again once the plan is active.", "plan_required");
  }
}

/**
 * The billing side sets the plan and whether it is active (`PUT /internal/v1/businesses/{id}/plan`: docs/decisions.md,
 * The Secretary runtime API).
 */
export async function setPlan(deps: Dependencies, businessId: string, plan: { plan: Plan; active: boolean }) {
  const { db } = deps;
  // One round trip: the update only where the business is unmarked (`placedHere` refuses a marked row before anything
  // is written), and the row as it then is, to tell which it was.
  const [[updated], [row]] = await db.batch([
    db
      .update(businesses)
      .set({ plan: plan.plan, planActive: plan.active, updatedAt: iso(deps.clock()) })
      .where(and(eq(businesses.id, businessId), isNull(businesses.movingSince)))
      .returning(),
    db.select().from(businesses).where(eq(businesses.id, businessId)),
  ]);
  const business = placedHere(updated ?? row);
  return { ...toBusinessObject(business), plan: business.plan, plan_active: business.planActive };
}
