import { DurableObject } from "cloudflare:workers";

/**
 * One per Secretary conversation (`idFromName(conversationId)`): the running intake, its answers, the 24-hour alarm
 * and the exactly-once completion (DESIGN.md). Its methods arrive with the intake conversation issue; the class is
 * declared from the start so that its SQLite-backed migration tag is the first one.
 */
export class IntakeConversation extends DurableObject {}
