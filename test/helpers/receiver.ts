import { env } from "cloudflare:test";
import { vi } from "vitest";
import type { RecordedRequest } from "../recorded-request";

/** A fresh box on the test receiver: a URL prefix whose requests are recorded apart from every other test's. */
export function receiverBox(name = "box") {
  const box = `${name}-${crypto.randomUUID()}`;
  const recorded = async () =>
    (await (await fetch(`${env.RECEIVER_URL}/__recorded/${box}`)).json()) as RecordedRequest[];
  return {
    url: (path = "") => `${env.RECEIVER_URL}/${box}${path}`,
    recorded,
    /** Answers the request that `/hold/<n>` keeps waiting (at once if it has not arrived yet). */
    release: async () => {
      await (await fetch(`${env.RECEIVER_URL}/__release/${box}`)).body?.cancel();
    },
    /**
     * What the box has recorded once at least `count` requests have arrived: a delivery through the real queue
     * arrives when the consumer gets to it, not when the request that wrote it is answered.
     */
    arrived: (count: number, timeout = 10_000) =>
      vi.waitFor(
        async () => {
          const requests = await recorded();
          if (requests.length < count) throw new Error(`${requests.length} of ${count} requests arrived so far`);
          return requests;
        },
        { timeout, interval: 100 },
      ),
  };
}
