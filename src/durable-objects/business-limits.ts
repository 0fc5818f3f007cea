import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env";

/**
 * One per business (`idFromName(businessId)`): the per-business counters the Rate Limiting binding cannot give
 * exactly, such as 120 knowledge pushes per clock hour (DESIGN.md). The counters arrive with the knowledge issue;
 * the class is declared from the start so that its SQLite-backed migration tag is the first one.
 */
export class BusinessLimits extends DurableObject<Env> {}
