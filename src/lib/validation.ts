import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { type ApiError, invalid, invalidField } from "./api-error";
import type { ErrorCode } from "./error-codes";
import { hiddenCharacterProblem } from "./text";

type Issue = z.core.$ZodIssue;
const SUBJECTS: Record<string, string> = {
  query: "query parameter",
  param: "path parameter",
  json: "field",
  form: "field",
  header: "header",
};

/** `["fields", 1, "options"]` → `fields[1].options`, the index notation of `param` and `field` (docs/errors.md). */
export function fieldPath(path: readonly PropertyKey[]): string {
  return path.reduce<string>((text, part) => {
    if (typeof part === "number") return `${text}[${part}]`;
    return text ? `${text}.${String(part)}` : String(part);
  }, "");
}

/** A problem's sentence: `The field "fields[1].options" must have at least 2 items.` */
export function issueSentence(target: string, issue: Issue): string {
  const subject =
    issue.path.length > 0 ? `The ${SUBJECTS[target] ?? target} "${fieldPath(issue.path)}"` : "The request body";
  return `${subject} ${issue.message}.`;
}

/** What is at `path` in the input as sent: `undefined` when nothing is, which makes a problem a missing parameter. */
function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let value = input;
  for (const part of path) {
    if (typeof value !== "object" || value === null || !Object.hasOwn(value, part)) return undefined;
    value = (value as Record<PropertyKey, unknown>)[part];
  }
  return value;
}

/**
 * The 400 of a validation problem (docs/errors.md): the sentence naming the input, and the input's path as `param`.
 * A member absent from the input is `parameter_missing`; anything else about it, `parameter_invalid` (an unknown
 * member of the internal API's strict bodies is named itself: its parent's path, then its key). The intake routes
 * name it as `field` too (docs/guides/intakes.md). A problem of the body as a whole has no `param`.
 */
function issueError(target: string, issue: Issue | undefined, input: unknown, options: { field: boolean }): ApiError {
  if (!issue) return invalid("The request is not valid.");
  const field = issue.path.length > 0 ? fieldPath(issue.path) : undefined;
  const message = issueSentence(target, issue);
  const unknownKey = issue.code === "unrecognized_keys" ? issue.keys[0] : undefined;
  const param = unknownKey === undefined ? field : fieldPath([...issue.path, unknownKey]);
  if (param === undefined) return invalid(message);
  const code: ErrorCode =
    unknownKey === undefined && valueAt(input, issue.path) === undefined ? "parameter_missing" : "parameter_invalid";
  return options.field ? invalidField(message, param, code) : invalid(message, param, code);
}

/** What @hono/zod-validator hands a hook: the target, the input as sent (`data`) and the outcome. */
type ValidationResult = { target: string; data?: unknown } & (
  | { success: true }
  | { success: false; error: z.core.$ZodError }
);

/** The hook every zod-validated route uses: the first problem becomes the 400 (docs/errors.md, Codes). */
export function rejectInvalid(result: ValidationResult, _c: Context): undefined {
  if (result.success) return;
  throw issueError(result.target, result.error.issues[0], result.data, { field: false });
}

/**
 * The same, plus `field` with the offending member in index notation, for the intake routes, whose errors are
 * `{ error, field }` (docs/guides/intakes.md).
 */
export function rejectInvalidNamingField(result: ValidationResult, _c: Context): undefined {
  if (result.success) return;
  throw issueError(result.target, result.error.issues[0], result.data, { field: true });
}

/** Validates an input outside a route (RPC methods) with the same sentences as the routes' 400s. */
export function parseOrThrow<S extends z.ZodType>(schema: S, input: unknown, target: string): z.output<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  throw issueError(target, result.error.issues[0], input, { field: false });
}

/** A `YYYY-MM-DD` calendar date (2026-02-30 is refused, not rolled over). */
export const isoDate = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, { error: "must be a date written YYYY-MM-DD" })
  .refine(
    (value) => {
      const date = new Date(`${value}T00:00:00Z`);
      return !Number.isNaN(date.getTime()) && date.toISOString().startsWith(value);
    },
    { error: "must be a real calendar date" },
  )
  .openapi({ format: "date", example: "2026-11-22" });

/** `HH:MM`, 24-hour. */
export const clockTime = z
  .string()
  .regex(/^([01]\d|2[0-3]):[0-5]\d$/, { error: "must be a time written HH:MM" })
  .openapi({ example: "14:30" });

/**
 * RFC 3339 §5.6 `date-time`, the profile of ISO 8601 that OpenAPI's `date-time` format names: a date, `T`, a time
 * with seconds (a fraction optional) and the zone, `Z` or `±hh:mm`. Without its zone a time names no instant.
 */
const ZONED_DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:Z|[+-](\d{2}):(\d{2}))$/;

/** Every part within its range: 2026-02-30, 24:00 or a +24:00 offset are refused, not rolled over as Date does. */
function isRealDateTime(value: string): boolean {
  // The zone's parts are absent for `Z`.
  const [year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0, zoneHours = 0, zoneMinutes = 0] = (
    ZONED_DATE_TIME.exec(value)?.slice(1) ?? []
  ).map((part) => Number(part ?? 0));
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  return (
    date.getUTCMonth() === month - 1 &&
    date.getUTCDate() === day &&
    hour <= 23 &&
    minute <= 59 &&
    second <= 59 &&
    zoneHours <= 23 &&
    zoneMinutes <= 59
  );
}

/**
 * A timestamp: the API writes ISO 8601 UTC with milliseconds. One the core platform reports must name an instant (a
 * date-time with its zone), and is normalised to UTC with milliseconds so that it reads and sorts like ours
 * (docs/decisions.md, Data model). Refinements, not a pattern, so that the OpenAPI document shows a plain `date-time`.
 */
export const timestamp = z
  .string()
  .refine((value) => ZONED_DATE_TIME.test(value), {
    error: "must be an ISO 8601 date and time with its time zone, such as 2026-11-22T10:30:00+01:00",
    abort: true,
  })
  .refine(isRealDateTime, { error: "must be a real date and time" })
  .transform((value) => new Date(value).toISOString())
  .openapi({ format: "date-time", example: "2026-11-22T09:30:00.000Z" });

/**
 * A whole number in a query string, strictly digits (no `1e2`, no `0x10`, no blanks), within bounds; absent → the
 * default.
 */
export function queryInteger(bounds: { min: number; max: number; default: number }) {
  const rule = `must be a whole number from ${bounds.min} to ${bounds.max}`;
  return z
    .string()
    .regex(/^\d{1,6}$/, { error: rule })
    .transform(Number)
    .pipe(z.number().min(bounds.min, { error: rule }).max(bounds.max, { error: rule }))
    .optional()
    .transform((value) => value ?? bounds.default)
    .openapi({ type: "integer", minimum: bounds.min, maximum: bounds.max, default: bounds.default });
}

/**
 * A page cursor in a query string: the id of a record (`record`: "a delivery", "a response"), a whole number from 1,
 * as the domain takes it (a number); absent → undefined.
 */
export function queryId(record: string, description: string) {
  return z
    .string()
    .refine((value) => numericId(value) !== undefined, { error: `must be ${record} id: a whole number from 1` })
    .transform(Number)
    .optional()
    .openapi({ type: "integer", format: "int64", minimum: 1, description });
}

/**
 * A record's id in a body: a whole number that the document marks `int64`, so that generators for Java, Go or C#
 * give it 64 bits (ids are numbered in slots per shard and outgrow 32: docs/openapi.md).
 */
export const recordId = z.number().int().openapi({ format: "int64" });

/**
 * A numeric resource id from a path, documented as the integer the bodies carry, so that a generated client takes
 * the `id` it received (docs/openapi.md). The URL is text: validated here as a string, so that anything that is not
 * an id names nothing and gets the resource's 404 rather than a 400: `/webhooks/abc` and `/webhooks/999` both "do
 * not exist for this credential" (docs/errors.md, Which answers carry which).
 */
export const numericPathId = (name: string) =>
  z.string().openapi({ param: { name, in: "path" }, type: "integer", format: "int64", minimum: 1, example: 12 });

export const pathId = numericPathId("id");

/**
 * A path id as the domain takes it (a number), or the resource's 404: an id that is not a whole number names no
 * record, and says so exactly as an unknown one does. Called once, at the edge (routes and dashboard forms).
 */
export function idOrNotFound(text: string, notFound: () => ApiError): number {
  const id = numericId(text);
  if (id === undefined) throw notFound();
  return id;
}

export function numericId(text: string): number | undefined {
  return /^[1-9]\d{0,15}$/.test(text) && Number.isSafeInteger(Number(text)) ? Number(text) : undefined;
}

/**
 * Names that are not names of data: every name a plain object answers without owning it, from Object.prototype
 * itself (`constructor`, `toString`, `__proto__`, ...), and `prototype`. A partner's name for data (an action
 * parameter, a question id) becomes a key of the objects carrying values, where it would reach an object's machinery
 * wherever a name is read without `Object.hasOwn` (docs/intakes.md, Validation).
 */
const NAMES_THAT_ARE_NOT_DATA: ReadonlySet<string> = new Set([
  ...Object.getOwnPropertyNames(Object.prototype),
  "prototype",
]);

export const isNotDataName = (name: string) => NAMES_THAT_ARE_NOT_DATA.has(name);

/** The predicate of the 400 for such a name: `thing` is what the name names ("a parameter", "a question id"). */
export const notDataNameRule = (thing: string) => `a name every object inherits, which ${thing} may not have`;

/**
 * A refinement for partner text that owners read: refuses invisible and direction-changing characters, naming the
 * first one's code point (`hiddenCharacterProblem`, src/lib/text.ts). `lines`: the text may have several lines.
 * Use as `z.string().superRefine(visibleText({ lines: false }))`.
 */
export function visibleText(options: { lines: boolean }) {
  return (value: string, ctx: z.RefinementCtx) => {
    const problem = hiddenCharacterProblem(value, options);
    if (problem) ctx.addIssue({ code: "custom", message: problem, input: value });
  };
}
