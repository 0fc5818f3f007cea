import { z } from "@hono/zod-openapi";

type RawIssue = z.core.$ZodRawIssue;

/**
 * Zod's messages are phrased once here as predicates ("must be at most 100"), so that every 400 reads
 * `<The field "x"> <predicate>.`, naming the input (docs/errors.md). Schemas that need a sharper rule write
 * their own predicate with `{ error: "..." }`.
 */
function predicate(issue: RawIssue): string | undefined {
  switch (issue.code) {
    case "invalid_type":
      return issue.input === undefined ? "is required" : `must be ${article(issue.expected)}`;
    case "too_small":
      return bound(issue.origin, "at least", issue.minimum);
    case "too_big":
      return bound(issue.origin, "at most", issue.maximum);
    case "invalid_value":
      if (issue.input === undefined) return "is required";
      return `must be one of ${issue.values.map((value) => JSON.stringify(value)).join(", ")}`;
    case "invalid_format":
      return issue.format === "regex" ? "is not in the expected format" : `must be a valid ${issue.format}`;
    case "invalid_key":
      // A record key that failed its own schema: that schema's sentence says why.
      return issue.issues[0]?.message ?? "has a key that is not allowed";
    case "unrecognized_keys":
      return `has unknown ${issue.keys.length === 1 ? "key" : "keys"} ${issue.keys.map((key) => `"${key}"`).join(", ")}`;
    default:
      return undefined;
  }
}

function article(expected: string): string {
  const noun = expected === "int" ? "integer" : expected === "record" ? "object" : expected;
  return /^[aeiou]/.test(noun) ? `an ${noun}` : `a ${noun}`;
}

function bound(origin: string, comparison: string, limit: number | bigint): string {
  const plural = limit === 1 || limit === 1n ? "" : "s";
  if (origin === "string") return `must be ${comparison} ${limit} character${plural} long`;
  if (origin === "array" || origin === "set") return `must have ${comparison} ${limit} item${plural}`;
  return `must be ${comparison} ${limit}`;
}

/** Installs the predicates as zod's messages: called once, by the Worker's entry (src/index.ts). */
export function phraseZodMessages(): void {
  z.config({ customError: predicate });
}
