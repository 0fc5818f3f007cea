export * from "./actions";
export * from "./businesses";
export * from "./commerce";
export * from "./idempotency";
export * from "./intakes";
export * from "./knowledge";
export * from "./oauth";
export * from "./webhooks";
