export * from "./actions";
export * from "./businesses";
export * from "./commerce";
export * from "./intakes";
export * from "./knowledge";
export * from "./oauth";
export * from "./webhooks";
