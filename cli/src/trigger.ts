import { type paths, unwrap } from "@secretary/partner-sdk";
import { clientOf, failureSentence } from "./api.js";
import type { Api } from "./arguments.js";

/** The events the sandbox causes; the name given on the command line is the service's to check, with its sentence. */
type SandboxEvent = NonNullable<
  paths["/sandbox/events"]["post"]["requestBody"]
>["content"]["application/json"]["event"];

/**
 * `secretary trigger <event>`: `POST /api/v1/sandbox/events` (docs/guides/sandbox.md), which causes the event on the
 * key's sandbox business as the core platform would; its deliveries go to every endpoint of the key's side, a
 * running `secretary listen` included. Test keys only: the server's sentence is printed otherwise. Answers the exit
 * status.
 */
export async function trigger(api: Api, event: string, print = console.log, printError = console.error) {
  try {
    const body = { event: event as SandboxEvent };
    const { events } = await unwrap(clientOf(api).POST("/sandbox/events", { body }));
    for (const emitted of events) print(`Triggered ${emitted.event}: ${emitted.id}`);
    return 0;
  } catch (error) {
    printError(failureSentence(error, api));
    return 1;
  }
}
