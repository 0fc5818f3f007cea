import { expect } from "vitest";

/** How much of an unexpected answer's body a failure prints: enough for the error sentence and its code. */
const BODY_SHOWN = 500;

/** What the tests check the status of: a Response, or an answer already read, like a page's `{ status, html }`. */
type Answer = Response | { status: number; html?: string; text?: string };

declare module "vitest" {
  interface Assertion<R extends void | Promise<void> = void, T = unknown> {
    /**
     * The answer has this status. A mismatch names both statuses and the answer's body (docs/errors.md: the sentence
     * says what was wrong), read from a clone so that the test can still read it; a match reads nothing.
     */
    toHaveStatus(status: number): Promise<void>;
  }
}

/** The words a page shows, without its head, menu, styles and scripts, which would fill the lines a failure prints. */
const pageText = (html: string) =>
  html
    .replace(/<head[\s\S]*?<\/head>|<(nav|script|style)[\s\S]*?<\/\1>/gi, "")
    .replace(/<[^>]*>/g, " ")
    .replace(/\s+/g, " ")
    .trim();

/** What a failure shows of the answer: its body's text (a page's words), cut to `BODY_SHOWN` characters. */
async function shown(answer: Answer) {
  let text: string;
  if (!(answer instanceof Response)) text = answer.html === undefined ? (answer.text ?? "") : pageText(answer.html);
  else if (answer.bodyUsed) return "(its body was already read)";
  else {
    text = await answer.clone().text();
    if (answer.headers.get("Content-Type")?.startsWith("text/html")) text = pageText(text);
  }
  return text.length > BODY_SHOWN ? `${text.slice(0, BODY_SHOWN)}…` : text || "(an empty body)";
}

expect.extend({
  async toHaveStatus(answer: Answer, status: number) {
    if (typeof answer?.status !== "number")
      return { pass: false, message: () => `expected an answer with status ${status}, got ${String(answer)}` };
    const pass = answer.status === status;
    const body = pass === Boolean(this.isNot) ? await shown(answer) : "";
    return {
      pass,
      actual: answer.status,
      expected: status,
      message: () =>
        this.isNot
          ? `expected a status other than ${status}: ${body}`
          : `expected status ${status}, got ${answer.status}: ${body}`,
    };
  },
});
