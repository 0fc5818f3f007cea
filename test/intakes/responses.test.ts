import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { intakeResponses, intakes } from "../../src/db/schema";
import { readCredential } from "../../src/domain/access/principals";
import { listResponses } from "../../src/domain/intakes/responses";
import { createApiKey, createBusiness, db } from "../helpers/fixtures";
import { expectError, json } from "../helpers/http";
import { createIntake, deleteIntake, getResponses, insertResponses, TIMESTAMP } from "../helpers/intakes";
import { NOT_FOUND } from "../helpers/intakes-api";
import { runAlone } from "../helpers/statements";

type ResponseObject = {
  id: number;
  conversation: { id: string; channel: string };
  answers: Array<{ id: string; label: string; type: string; value: string; proof?: string }>;
  status: string;
  completed_at: string;
  created_at: string;
};
type Page = { data: ResponseObject[]; next_before: number | null };

const page = async (key: string, id: number, query = "") => {
  const response = await getResponses(key, id, query);
  await expect(response).toHaveStatus(200);
  return json<Page>(response);
};

describe("GET /api/v1/intakes/{id}/responses", async () => {
  const { business, apiKey } = await createBusiness();
  const intake = await createIntake(apiKey, { name: "busy" });
  const neighbour = await createIntake(apiKey, { name: "neighbour" });
  // Interleaved with another intake's responses, so that ids of the two alternate in the shared index.
  for (let round = 0; round < 4; round++) {
    await insertResponses(intake, business.id, 30);
    await insertResponses(neighbour, business.id, 5);
  }
  const stored = await db
    .select({ id: intakeResponses.id })
    .from(intakeResponses)
    .where(eq(intakeResponses.intakeId, intake.id));
  const allIds = stored.map((row) => row.id).sort((a, b) => b - a);

  it("walks 120 responses in three pages of 50, 50 and 20, newest first, none twice, none missing", async () => {
    expect(allIds).toHaveLength(120);
    const first = await page(apiKey, intake.id);
    expect(first.data).toHaveLength(50);
    expect(first.next_before).toBe(first.data.at(-1)?.id);
    const second = await page(apiKey, intake.id, `?before=${first.next_before}`);
    expect(second.data).toHaveLength(50);
    expect(second.next_before).toBe(second.data.at(-1)?.id);
    const third = await page(apiKey, intake.id, `?before=${second.next_before}`);
    expect(third.data).toHaveLength(20);
    expect(third.next_before).toBeNull();

    const walked = [...first.data, ...second.data, ...third.data].map((response) => response.id);
    expect(new Set(walked).size).toBe(120);
    expect(walked).toEqual(allIds);
  });

  it("answers each response exactly as docs/guides/intakes.md, Reading responses shows it", async () => {
    const { data } = await page(apiKey, intake.id);
    const [newest] = data;
    expect(Object.keys(newest ?? {})).toEqual([
      "id",
      "conversation",
      "answers",
      "status",
      "completed_at",
      "created_at",
    ]);
    expect(newest).toEqual({
      id: allIds[0],
      conversation: { id: expect.stringMatching(/^conv_/), channel: expect.any(String) },
      answers: [
        { id: "full_name", label: "What is your name?", type: "text", value: expect.stringMatching(/^Customer /) },
        {
          id: "email",
          label: "Which email address should we reply to?",
          type: "email",
          value: expect.stringMatching(/@example\.com$/),
          proof: "stated",
        },
      ],
      status: "completed",
      completed_at: expect.stringMatching(TIMESTAMP),
      created_at: expect.stringMatching(TIMESTAMP),
    });
  });

  it("gives proof only on email and phone answers, and leaves out unanswered optional questions", async () => {
    const { business: shop, apiKey: key } = await createBusiness();
    const contact = await createIntake(key, {
      fields: [
        { id: "name", label: "Name?", type: "text", required: true },
        { id: "phone", label: "Phone?", type: "phone", required: true },
        { id: "email", label: "Email?", type: "email" },
      ],
    });
    await insertResponses(contact, shop.id, 1, () => [
      // A proof stored on a text answer is never shown: only email and phone answers carry one (docs/guides/intakes.md, Proof).
      { id: "name", label: "Name?", type: "text", value: "Ana", proof: "stated" },
      { id: "phone", label: "Phone?", type: "phone", value: "+31612345678", proof: "verified" },
    ]);
    const [response] = (await page(key, contact.id)).data;
    expect(response?.answers).toEqual([
      { id: "name", label: "Name?", type: "text", value: "Ana" },
      { id: "phone", label: "Phone?", type: "phone", value: "+31612345678", proof: "verified" },
    ]);
  });

  it("answers an empty page, and a page beyond the oldest, with next_before null", async () => {
    const quiet = await createIntake(apiKey, { name: "quiet" });
    expect(await page(apiKey, quiet.id)).toEqual({ data: [], next_before: null });
    expect(await page(apiKey, intake.id, `?before=${Math.min(...allIds)}`)).toEqual({ data: [], next_before: null });
    expect(await page(apiKey, intake.id, "?before=1")).toEqual({ data: [], next_before: null });
    await deleteIntake(apiKey, quiet.id);
  });

  it("starts anywhere: before an id that is not a response of this intake, or beyond the newest", async () => {
    const beyond = await page(apiKey, intake.id, `?before=${Number.MAX_SAFE_INTEGER}`);
    expect(beyond.data.map((response) => response.id)).toEqual(allIds.slice(0, 50));
    const middle = allIds[70] ?? 0;
    const fromMiddle = await page(apiKey, intake.id, `?before=${middle + 1}`);
    expect(fromMiddle.data.map((response) => response.id)).toEqual(allIds.slice(70, 120));
    expect(fromMiddle.next_before).toBeNull();
  });

  it("knows that exactly 50 is one page and 51 is two", async () => {
    const { business: shop, apiKey: key } = await createBusiness();
    const fifty = await createIntake(key, { name: "fifty" });
    await insertResponses(fifty, shop.id, 50);
    expect(await page(key, fifty.id)).toMatchObject({ next_before: null });
    expect((await page(key, fifty.id)).data).toHaveLength(50);
    await insertResponses(fifty, shop.id, 1);
    const first = await page(key, fifty.id);
    expect(first.data).toHaveLength(50);
    expect(first.next_before).toEqual(expect.any(Number));
    const last = await page(key, fifty.id, `?before=${first.next_before}`);
    expect(last.data).toHaveLength(1);
    expect(last.next_before).toBeNull();
  });

  it.each([["abc"], ["0"], ["-1"], ["1.5"], ["1e3"], ["0x10"], [""], [" 5"], ["01"], ["99999999999999999"]])(
    "refuses before=%j with 400 naming the field before",
    async (before) => {
      const response = await getResponses(apiKey, intake.id, `?before=${encodeURIComponent(before)}`);
      await expect(response).toHaveStatus(400);
      expect(await json(response)).toEqual({
        error: 'The query parameter "before" must be a response id: a whole number from 1.',
        code: "parameter_invalid",
        param: "before",
        field: "before",
        request_id: response.headers.get("X-Request-Id"),
      });
    },
  );

  it("answers 404 for the responses of another key's intake, with nothing of theirs", async () => {
    const sibling = await createApiKey(business.id);
    await expectError(await getResponses(sibling.apiKey, intake.id), 404, NOT_FOUND, {
      code: "not_found",
      param: undefined,
    });
  });

  it("reads only the rows of the page (and one index entry more), whatever else is stored", async () => {
    // Scoped as the route scopes it: by sub-selects on the credential's hash.
    const scope = { credential: await readCredential(`Bearer ${apiKey}`), now: Date.now() };
    for (const before of [undefined, allIds[49], allIds[99]]) {
      // The page itself: the read's second statement (the first checks that the intake is the key's own).
      const { rows, rowsRead } = await runAlone(listResponses(scope, intake.id, before).statements[1]);
      // The page's rows, plus the owner check (the intake, and the key twice: business and key id), plus the entry
      // that ends a last page.
      expect(rows).toBe(before === allIds[99] ? 20 : 51);
      expect(rowsRead).toBeLessThanOrEqual(rows + 4);
    }
    // Another key's principal reads nothing at all.
    const sibling = await createApiKey(business.id);
    const stranger = { credential: await readCredential(`Bearer ${sibling.apiKey}`), now: Date.now() };
    const { rows, rowsRead } = await runAlone(listResponses(stranger, intake.id).statements[1]);
    expect(rows).toBe(0);
    expect(rowsRead).toBeLessThanOrEqual(3);
  });
});

describe("DELETE /api/v1/intakes/{id} removes the intake's responses with it", () => {
  it("leaves no response behind, and another intake's responses untouched", async () => {
    const { business, apiKey } = await createBusiness();
    const doomed = await createIntake(apiKey, { name: "doomed" });
    const kept = await createIntake(apiKey, { name: "kept" });
    await insertResponses(doomed, business.id, 30);
    await insertResponses(kept, business.id, 7);
    expect(await db.$count(intakeResponses, eq(intakeResponses.intakeId, doomed.id))).toBe(30);

    await expect(await deleteIntake(apiKey, doomed.id)).toHaveStatus(204);
    expect(await db.$count(intakeResponses, eq(intakeResponses.intakeId, doomed.id))).toBe(0);
    expect(await db.$count(intakes, eq(intakes.id, doomed.id))).toBe(0);
    expect(await db.$count(intakeResponses, eq(intakeResponses.intakeId, kept.id))).toBe(7);
    const gone = await getResponses(apiKey, doomed.id);
    await expect(gone).toHaveStatus(404);
    expect((await page(apiKey, kept.id)).data).toHaveLength(7);
  });
});
