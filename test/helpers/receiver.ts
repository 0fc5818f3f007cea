import { env } from "cloudflare:test";
import type { RecordedRequest } from "../recorded-request";

/** A fresh box on the test receiver: a URL prefix whose requests are recorded apart from every other test's. */
export function receiverBox(name = "box") {
  const box = `${name}-${crypto.randomUUID()}`;
  return {
    url: (path = "") => `${env.RECEIVER_URL}/${box}${path}`,
    recorded: async () => (await (await fetch(`${env.RECEIVER_URL}/__recorded/${box}`)).json()) as RecordedRequest[],
  };
}
