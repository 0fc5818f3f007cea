/**
 * Drizzle's DrizzleQueryError says "Failed query: <sql>\nparams: <bound values>": the values can be a token's hash, a
 * business id, a customer's answer. Everything from a line that starts with "params:" is cut.
 */
const BOUND_PARAMETERS = /(^|\n)params:[\s\S]*$/;

/**
 * What a log line may say of an unexpected error: its name and message, never a query's bound parameters
 * (docs/architecture.md, Everywhere). The message is followed by its causes' (a D1 failure's own words, such as
 * "D1_ERROR: UNIQUE constraint failed: …", are in the cause Drizzle wraps), each without bound values. Errors that
 * keep Error's generic name (DrizzleQueryError does) are named by their class instead: wrangler keeps class names
 * when it minifies.
 */
export function loggableError(error: Error): { error: string; message: string } {
  const messages: string[] = [];
  const seen = new Set<Error>(); // a cycle of causes must not hang the error path
  for (let current: unknown = error; current instanceof Error && !seen.has(current); current = current.cause) {
    seen.add(current);
    const message = current.message.replace(BOUND_PARAMETERS, "").trim();
    // D1's error wraps one that says the same without its "D1_ERROR: " prefix: once is enough.
    if (!messages.at(-1)?.includes(message)) messages.push(message);
  }
  return {
    error: error.name === "Error" ? error.constructor.name : error.name,
    message: messages.join("; cause: "),
  };
}
