import { describe, expect, it } from "vitest";
import { call, expectError, json } from "../helpers/http";
import { ANOTHER_KEYS, type Page, twoKeys } from "../helpers/intake-answers";
import { ROUTES } from "../helpers/partner-routes";

// Every endpoint, delivery and event route, called by another key of the same business on the endpoint that carries
// the first key's intake answers (docs/webhooks.md, Intake answers stay with their intake): what the other key may
// do (read the endpoint, enable it, send it a test) it does; nothing lets it change, re-point or delete the endpoint,
// nor read, list, redeliver or recover the answers. The first key's own call then succeeds.

type Expected = { status: number; sentence?: RegExp | string; check?: (response: Response) => Promise<void> };

const noAnswersListed = async (response: Response) => expect((await json<Page>(response)).data).toEqual([]);
const nothingQueued = async (response: Response) => expect(await json(response)).toEqual({ queued: 0 });

/** What the other key is answered on each route; a route of these kinds that is missing here fails the last test. */
const FOR_ANOTHER_KEY: Record<string, Expected> = {
  "GET /webhooks/{id}": { status: 200 },
  "PATCH /webhooks/{id}": { status: 403, sentence: ANOTHER_KEYS },
  "DELETE /webhooks/{id}": { status: 403, sentence: ANOTHER_KEYS },
  "POST /webhooks/{id}/enable": { status: 200 },
  "POST /webhooks/{id}/rotate-secret": { status: 403, sentence: ANOTHER_KEYS },
  "GET /webhooks/{id}/deliveries": { status: 200, check: noAnswersListed },
  "POST /webhooks/{id}/deliveries/{delivery_id}/redeliver": { status: 404, sentence: /No delivery with that id/ },
  "POST /webhooks/{id}/recover": { status: 202, check: nothingQueued },
  "POST /webhooks/{id}/test": { status: 202 },
  "GET /events/{id}": { status: 404, sentence: /No event with that id/ },
};

const isAnswersRoute = (path: string) => path.startsWith("/webhooks/{id}") || path.startsWith("/events/{id}");
const ANSWERS_ROUTES = ROUTES.filter(([, path]) => isAnswersRoute(path));

describe("another key of the same business, on every route that reaches the first key's intake answers", () => {
  it.each(ANSWERS_ROUTES)("%s %s", async (method, path, ok, body) => {
    const { key1, key2, answers, completed, endpointRow } = await twoKeys("eu1");
    const delivery = await completed();
    const url = `/api/v1${path
      .replace("/webhooks/{id}", `/webhooks/${answers.id}`)
      .replace("{delivery_id}", String(delivery.id))
      .replace("/events/{id}", `/events/${delivery.eventId}`)}`;
    const before = await endpointRow();
    const expected = FOR_ANOTHER_KEY[`${method} ${path}`];
    if (!expected) throw new Error(`no row for ${method} ${path}`);

    const refused = await call(url, { method, body, key: key2 });
    if (expected.sentence) await expectError(refused, expected.status, expected.sentence);
    else await expect(refused).toHaveStatus(expected.status);
    await expected.check?.(refused);
    if (expected.status === 403) expect(await endpointRow()).toEqual(before);

    const own = await call(url, { method, body, key: key1 });
    await expect(own).toHaveStatus(ok);
  });

  it("has a row for each such route of the table of every partner route", () => {
    expect(ANSWERS_ROUTES.map(([method, path]) => `${method} ${path}`).sort()).toEqual(
      Object.keys(FOR_ANOTHER_KEY).sort(),
    );
  });
});
