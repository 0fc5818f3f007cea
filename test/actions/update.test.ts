import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { actions } from "../../src/db/schema";
import { actionsForSecretary, enabledActions } from "../../src/domain/actions/for-secretary";
import { switchAction } from "../../src/domain/actions/owner-decisions";
import {
  ACTION_FIELDS,
  type Action,
  create,
  getOne,
  NO_PARAMETERS,
  NOT_FOUND,
  PARAMETERS,
  PRIVATE,
  patch,
  rowOf,
  TIMESTAMP,
  type WithCalls,
} from "../helpers/actions-api";
import { deps } from "../helpers/dependencies";
import { createBusiness, db } from "../helpers/fixtures";
import { expectError, json } from "../helpers/http";

describe("PATCH /api/v1/actions/{id}", async () => {
  const OLD = "2020-01-01T00:00:00.000Z";

  /**
   * An action of a business of its own (so that no test meets the 10-action limit), its updatedAt set in the past
   * so that a write is visible without waiting.
   */
  async function aged() {
    const { business, apiKey } = await createBusiness();
    const created = await create(apiKey);
    await db.update(actions).set({ updatedAt: OLD }).where(eq(actions.id, created.id));
    return { business, apiKey, created: { ...created, updatedAt: OLD } };
  }

  it.each([
    ["title", { title: "Free slots on a day" }],
    [
      "description",
      { description: "Tells which slots are free on one day; use it when a customer asks when they can come." },
    ],
    [
      "parameters",
      {
        parameters: {
          type: "object",
          properties: { day: { type: "string", description: "YYYY-MM-DD" } },
          required: ["day"],
        },
      },
    ],
    ["url", { url: "https://partner.example/actions/v2/check-slots" }],
  ])("changes the %s, answering 200 with the action and a new updatedAt", async (_field, change) => {
    const { apiKey, created } = await aged();
    const response = await patch(apiKey, created.id, change);
    await expect(response).toHaveStatus(200);
    const body = await json<Action>(response);
    expect(Object.keys(body).sort()).toEqual(ACTION_FIELDS);
    const { secret, ...unchanged } = created;
    expect(body).toEqual({ ...unchanged, ...change, updatedAt: expect.stringMatching(TIMESTAMP) });
    expect(body.updatedAt > OLD).toBe(true);
    expect(JSON.stringify(body)).not.toContain(secret);
    expect(await json<WithCalls>(await getOne(apiKey, created.id))).toEqual({ ...body, calls: [] });
    expect(await rowOf(created.id)).toMatchObject({ ...change, updatedAt: body.updatedAt, secret });
  });

  it("changes several fields at once", async () => {
    const { apiKey, created } = await aged();
    const change = { title: "Slots", description: "d".repeat(600), parameters: NO_PARAMETERS };
    const body = await json<Action>(await patch(apiKey, created.id, change));
    expect(body).toMatchObject(change);
    expect(body.updatedAt > OLD).toBe(true);
  });

  it("switches the action off when the url changes, and leaves it off for the owner to approve again", async () => {
    const { business, apiKey, created } = await aged();
    await switchAction(deps, business.id, created.id, true);
    expect((await json<WithCalls>(await getOne(apiKey, created.id))).enabled).toBe(true);

    const body = await json<Action>(await patch(apiKey, created.id, { url: "https://partner.example/new" }));
    expect(body).toMatchObject({ url: "https://partner.example/new", enabled: false });
    expect((await rowOf(created.id))?.enabled).toBe(false);
    expect(
      (await actionsForSecretary(await enabledActions(deps.db, business.id), "whatsapp")).map((a) => a.name),
    ).not.toContain(created.name);
  });

  it("keeps the action on when the same url is sent back, or when only other fields change", async () => {
    const { business, apiKey, created } = await aged();
    await switchAction(deps, business.id, created.id, true);
    const same = await json<Action>(await patch(apiKey, created.id, { url: created.url }));
    expect(same.enabled).toBe(true);
    const retitled = await json<Action>(
      await patch(apiKey, created.id, { url: created.url, title: "Another title", description: "e".repeat(30) }),
    );
    expect(retitled).toMatchObject({ enabled: true, title: "Another title" });
    expect((await rowOf(created.id))?.enabled).toBe(true);
  });

  it("keeps updatedAt and writes nothing when the PATCH changes nothing", async () => {
    const { apiKey, created } = await aged();
    const before = await rowOf(created.id);
    const read = await json<WithCalls>(await getOne(apiKey, created.id));
    for (const body of [
      {},
      { title: read.title },
      { title: read.title, description: read.description, url: read.url, parameters: read.parameters },
      // The same schema with its keys in another order.
      { parameters: { required: PARAMETERS.required, properties: PARAMETERS.properties, type: "object" } },
    ]) {
      const response = await patch(apiKey, created.id, body);
      await expect(response).toHaveStatus(200);
      expect((await json<Action>(response)).updatedAt).toBe(OLD);
    }
    expect(await rowOf(created.id)).toEqual(before);
  });

  it("ignores name, enabled and other keys the partner may not change", async () => {
    const { apiKey, created } = await aged();
    const response = await patch(apiKey, created.id, {
      name: "renamed_action",
      enabled: true,
      secret: "actsec_chosen-by-the-partner",
      source: "oauth_app",
      failureCount: 3,
      id: 999_999,
    });
    await expect(response).toHaveStatus(200);
    const body = await json<Action>(response);
    expect(body).toMatchObject({
      id: created.id,
      name: created.name,
      enabled: false,
      source: "api_key",
      updatedAt: OLD,
    });
    expect(await rowOf(created.id)).toMatchObject({
      name: created.name,
      enabled: false,
      secret: created.secret,
      failureCount: 0,
      updatedAt: OLD,
    });
  });

  it("does not switch an enabled action off when enabled: false is sent", async () => {
    const { business, apiKey, created } = await aged();
    await switchAction(deps, business.id, created.id, true);
    const body = await json<Action>(await patch(apiKey, created.id, { enabled: false, title: "Renamed" }));
    expect(body).toMatchObject({ enabled: true, title: "Renamed" });
  });

  describe("refuses invalid changes with 400 and leaves the action as it was", async () => {
    const { apiKey, created: target } = await aged();

    it.each([
      ["an empty title", { title: "" }, 'The field "title" must be at least 1 character long.'],
      ["a title of 81 characters", { title: "t".repeat(81) }, 'The field "title" must be at most 80 characters long.'],
      [
        "a description of 19 characters",
        { description: "é".repeat(19) },
        'The field "description" must be 20 to 600 characters long.',
      ],
      [
        "a description of 601 characters",
        { description: "d".repeat(601) },
        'The field "description" must be 20 to 600 characters long.',
      ],
      ["an http url", { url: "http://partner.example/x" }, 'The field "url" must use https.'],
      ["a private url", { url: "https://10.0.0.1/x" }, `The field "url" ${PRIVATE}.`],
      ["the metadata address", { url: "https://169.254.169.254/" }, `The field "url" ${PRIVATE}.`],
      ["a unique local IPv6 url", { url: "https://[fd00::1]/" }, `The field "url" ${PRIVATE}.`],
      [
        "9 parameters",
        {
          parameters: {
            type: "object",
            properties: Object.fromEntries(
              Array.from({ length: 9 }, (_, i) => [`p${i}`, { type: "string", description: "x" }]),
            ),
          },
        },
        'The field "parameters.properties" must define at most 8 parameters.',
      ],
      [
        "a nested parameter",
        {
          parameters: {
            type: "object",
            properties: { f: { type: "string", description: "x", properties: {} } },
          },
        },
        'The field "parameters.properties.f.properties" nests parameters, and parameters are flat.',
      ],
      [
        "an array parameter",
        { parameters: { type: "object", properties: { f: { type: "array", description: "x" } } } },
        'The field "parameters.properties.f.type" must be one of "string", "number", "integer", "boolean".',
      ],
      [
        "a parameter without a description",
        { parameters: { type: "object", properties: { f: { type: "string" } } } },
        'The field "parameters.properties.f.description" is required.',
      ],
      [
        "an enum that does not fit its type",
        { parameters: { type: "object", properties: { f: { type: "integer", description: "x", enum: [1.5] } } } },
        'The field "parameters.properties.f.enum[0]" must be of type integer.',
      ],
      [
        "required naming an unknown parameter",
        { parameters: { type: "object", properties: {}, required: ["f"] } },
        'The field "parameters.required[0]" names "f", which is not a parameter.',
      ],
      [
        "a type other than object",
        { parameters: { type: "string", properties: {} } },
        'The field "parameters.type" must be "object".',
      ],
    ])("%s", async (_case, change, sentence) => {
      await expectError(await patch(apiKey, target.id, { title: "Would change", ...change }), 400, sentence);
      const row = await rowOf(target.id);
      expect(row).toMatchObject({ title: target.title, url: target.url, updatedAt: OLD, parameters: PARAMETERS });
    });

    it("refuses a bad parameter name", async () => {
      const parameters = { type: "object", properties: { "a-b": { type: "string", description: "x" } } };
      await expectError(await patch(apiKey, target.id, { parameters }), 400, /^The field "parameters\.properties/);
      expect((await rowOf(target.id))?.parameters).toEqual(PARAMETERS);
    });

    it("refuses malformed JSON", async () => {
      await expectError(await patch(apiKey, target.id, "{"), 400, "The request body is not valid JSON.");
    });
  });

  it("answers 404 for another business's action and leaves it unchanged", async () => {
    const { apiKey } = await aged();
    const other = await createBusiness();
    const theirs = await create(other.apiKey);
    const before = await rowOf(theirs.id);
    for (const body of [{ title: "Taken over" }, { url: "https://attacker.example/x" }, {}]) {
      await expectError(await patch(apiKey, theirs.id, body), 404, NOT_FOUND);
    }
    expect(await rowOf(theirs.id)).toEqual(before);
  });

  it.each(["abc", "0", "-1", "1.5", "1e3", "99999999", "99999999999999999999", "%20"])(
    "answers 404 for the id %j",
    async (id) => {
      const { apiKey } = await aged();
      await expectError(await patch(apiKey, id, { title: "x" }), 404, NOT_FOUND);
    },
  );
});
