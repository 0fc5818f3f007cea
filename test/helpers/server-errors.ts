import { app } from "../../src/app";
import worker from "../../src/index";

/**
 * The harness's watch on the Worker (docs/reliability.md, No 5xx goes unnoticed): every 5xx answered by the fetch
 * handler, and every uncaught error the error mapping logs, fails the test it happened in, unless that test called
 * `expectServerErrors()`. Installed once per file by test/setup.ts.
 */
const seen: string[] = [];
let expected = false;
let quiet = false;

/** Names, in a test that produces a fault on purpose, that it expects the Worker to answer 5xx or log an error. */
export function expectServerErrors() {
  expected = true;
}

/**
 * Keeps the Worker's error lines of this test off the report without expecting them: for a test of the harness
 * itself, which reads them with `takeServerErrors()`.
 */
export function quietErrorLines() {
  quiet = true;
}

/** What was seen since the test began, and forget it. */
export function takeServerErrors(): { seen: string[]; expected: boolean } {
  const result = { seen: seen.splice(0), expected };
  expected = false;
  quiet = false;
  return result;
}

type FetchHandler = (request: Request, env: never, ctx: never) => Response | Promise<Response>;

function watched(fetch: FetchHandler): FetchHandler {
  return async (request, env, ctx) => {
    const response = await fetch(request, env, ctx);
    if (response.status >= 500)
      seen.push(`${request.method} ${new URL(request.url).pathname} answered ${response.status}`);
    return response;
  };
}

let watching = false;

/** Wraps the Worker's handlers once per runtime (files that share a runtime share these modules). */
export function watchWorker() {
  if (watching) return;
  watching = true;
  // `worker.fetch` is the app's handler captured when src/index.ts was evaluated, and `app.request` calls
  // `app.fetch`: wrapping both covers every way a test reaches the Worker.
  worker.fetch = watched(worker.fetch as FetchHandler) as typeof worker.fetch;
  app.fetch = watched(app.fetch as FetchHandler) as typeof app.fetch;
  const consoleError = console.error.bind(console);
  console.error = (...args: unknown[]) => {
    const [first] = args;
    if (typeof first === "string" && first.includes('"level":"error"')) {
      seen.push(`logged ${first}`);
      // A fault the test produces on purpose is its subject, not news: its line is kept for the report of a test
      // that fails (test/setup.ts), and not printed when the test passes.
      if (expected || quiet) return;
    }
    consoleError(...args);
  };
  // The service's info lines (src/lib/log.ts: one per request, delivery attempt and action call) stay inside the
  // runtime: forwarding each to vitest costs more than the test (outbox-faults makes thousands of attempts) and
  // would bury the report. test/operations/structured-logs.test.ts reads them by spying on console.log.
  const consoleLog = console.log.bind(console);
  console.log = (...args: unknown[]) => {
    const [first] = args;
    if (typeof first === "string" && first.startsWith('{"level":"info"')) return;
    consoleLog(...args);
  };
}
