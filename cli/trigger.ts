import { type Api, callApi, errorSentence } from "./arguments.ts";

/**
 * `secretary trigger <event>`: `POST /api/v1/sandbox/events` (docs/guides/sandbox.md), which causes the event on the
 * key's sandbox business as the core platform would; its deliveries go to every endpoint of the key's side, a
 * running `secretary listen` included. Test keys only: the server's sentence is printed otherwise. Answers the exit
 * status.
 */
export async function trigger(api: Api, event: string, print = console.log, printError = console.error) {
  const response = await callApi(api, "/sandbox/events", { event });
  if (response.status !== 201) {
    printError(await errorSentence(response));
    return 1;
  }
  const { events } = (await response.json()) as { events: Array<{ id: string; event: string }> };
  for (const emitted of events) print(`Triggered ${emitted.event}: ${emitted.id}`);
  return 0;
}
