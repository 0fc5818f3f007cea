import type { Context } from "hono";
import { fieldPath } from "./validation";

/**
 * The members of a body that the API does not know, in the notation of `param` (`event`, `fields[1].hint`): those of
 * the input as sent that the parsed value no longer has, where zod's objects dropped them. A partner route ignores
 * them, as keys it does not know are (docs/guides/errors.md, Unknown members), and names them in this header, so that a
 * misspelt `event` for `events` is seen rather than silently lost.
 */
export const IGNORED_MEMBERS_HEADER = "Ignored-Members";

function ignoredMembers(input: unknown, output: unknown, path: PropertyKey[] = []): string[] {
  if (typeof input !== "object" || input === null || typeof output !== "object" || output === null) return [];
  return Object.keys(input).flatMap((key) => {
    const at = Array.isArray(input) ? Number(key) : key;
    return Object.hasOwn(output, key)
      ? ignoredMembers((input as Record<string, unknown>)[key], (output as Record<string, unknown>)[key], [...path, at])
      : [fieldPath([...path, at])];
  });
}

/**
 * Names, in `Ignored-Members`, what the body as sent had and its parsed value has not; nothing when all was known. A
 * header is printable ASCII (RFC 9110 §5.5): any other character of a key is written `\u{hex}`, and the list is cut
 * at 1,000 characters.
 */
export function announceIgnored(c: Context, input: unknown, output: unknown): void {
  const ignored = ignoredMembers(input, output).join(", ");
  const printable = ignored.replace(/[^ -~]/gu, (char) => `\\u{${char.codePointAt(0)?.toString(16)}}`);
  if (ignored) c.header(IGNORED_MEMBERS_HEADER, printable.length > 1000 ? `${printable.slice(0, 997)}...` : printable);
}
