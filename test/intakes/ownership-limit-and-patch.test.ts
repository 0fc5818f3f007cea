import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { intakes } from "../../src/db/schema";
import { createApiKey, createBusiness, db } from "../helpers/fixtures";
import { call, expectError, json } from "../helpers/http";
import {
  createIntake,
  deleteIntake,
  getIntake,
  getResponses,
  type Intake,
  intakeBody,
  patchIntake,
  postIntake,
  TIMESTAMP,
} from "../helpers/intakes";
import { chars, expectInvalid, NOT_FOUND, question, second } from "../helpers/intakes-api";

describe("at most 5 intakes per business, across every key", () => {
  it("refuses the 6th with 403 and a sentence, whichever key asks, and frees a place on delete", async () => {
    const { business, apiKey } = await createBusiness();
    const second = await createApiKey(business.id);
    const mine = [await createIntake(apiKey), await createIntake(apiKey), await createIntake(apiKey)];
    await createIntake(second.apiKey);
    await createIntake(second.apiKey);
    for (const key of [apiKey, second.apiKey]) {
      await expectError(
        await postIntake(key, intakeBody()),
        403,
        "A business can have at most 5 intakes, counted across every key and app: delete one before registering another.",
        { code: "limit_reached", param: undefined },
      );
    }
    await expect(await deleteIntake(apiKey, mine[0]?.id ?? 0)).toHaveStatus(204);
    await expect(await postIntake(second.apiKey, intakeBody())).toHaveStatus(201);
    await expect(await postIntake(apiKey, intakeBody())).toHaveStatus(403);
  });

  it("stores exactly 5 when 8 creates from two keys arrive at once", async () => {
    const { business, apiKey } = await createBusiness();
    const second = await createApiKey(business.id);
    const statuses = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        postIntake(i % 2 ? apiKey : second.apiKey, intakeBody({ name: `race_${i}` })).then((r) => r.status),
      ),
    );
    expect(statuses.filter((s) => s === 201)).toHaveLength(5);
    expect(statuses.filter((s) => s === 403)).toHaveLength(3);
    expect(await db.$count(intakes, eq(intakes.businessId, business.id))).toBe(5);
  });

  it("counts each business on its own", async () => {
    const full = await createBusiness();
    for (let i = 0; i < 5; i++) await createIntake(full.apiKey);
    const other = await createBusiness();
    await expect(await postIntake(other.apiKey, intakeBody())).toHaveStatus(201);
  });
});

describe("ownership: an intake belongs to the key that registered it", async () => {
  const { business, apiKey } = await createBusiness();
  const sibling = await createApiKey(business.id);
  const stranger = await createBusiness();
  const mine = await createIntake(apiKey, { name: "mine" });
  const theirs = await createIntake(sibling.apiKey, { name: "theirs" });
  const foreign = await createIntake(stranger.apiKey, { name: "foreign" });

  it("GET /intakes lists only the caller's own intakes, as { data }", async () => {
    expect(await json(await call("/api/v1/intakes", { key: apiKey }))).toEqual({ data: [mine] });
    expect(await json(await call("/api/v1/intakes", { key: sibling.apiKey }))).toEqual({ data: [theirs] });
    expect(await json(await call("/api/v1/intakes", { key: stranger.apiKey }))).toEqual({ data: [foreign] });
    const fresh = await createApiKey(business.id);
    expect(await json(await call("/api/v1/intakes", { key: fresh.apiKey }))).toEqual({ data: [] });
  });

  it("GET /intakes/{id} answers the caller's own intake", async () => {
    const response = await getIntake(apiKey, mine.id);
    await expect(response).toHaveStatus(200);
    expect(await json(response)).toEqual(mine);
  });

  const requests = {
    GET: (key: string, id: number | string) => getIntake(key, id),
    PATCH: (key: string, id: number | string) => patchIntake(key, id, { title: "Taken over" }),
    "GET responses": (key: string, id: number | string) => getResponses(key, id),
    DELETE: (key: string, id: number | string) => deleteIntake(key, id),
  };

  describe.each(Object.entries(requests))("%s", (_method, send) => {
    it.each([
      ["another key of the same business", () => theirs.id],
      ["another business", () => foreign.id],
      ["an id that does not exist", () => 987_654_321],
      ["an id that is not a number", () => "abc"],
      ["a zero id", () => "0"],
      ["a negative id", () => "-1"],
      ["a decimal id", () => "1.5"],
      ["an id with a leading zero", () => `0${mine.id}`],
    ])("answers 404 with the same sentence for an intake of %s", async (_case, id) => {
      await expectError(await send(apiKey, id()), 404, NOT_FOUND, { code: "not_found", param: undefined });
    });
  });

  it("leaves the other intakes as they were", async () => {
    expect(await json(await getIntake(sibling.apiKey, theirs.id))).toEqual(theirs);
    expect(await json(await getIntake(stranger.apiKey, foreign.id))).toEqual(foreign);
  });

  it("requires a credential on every route", async () => {
    for (const response of [
      await call("/api/v1/intakes"),
      await postIntake(undefined, intakeBody()),
      await getIntake(undefined, mine.id),
      await patchIntake(undefined, mine.id, { title: "New title" }),
      await deleteIntake(undefined, mine.id),
      await getResponses(undefined, mine.id),
    ]) {
      await expectError(response, 401, "An API key is required: send the header Authorization: Bearer <API key>.", {
        code: "authentication_required",
        param: undefined,
      });
    }
    const revoked = await createApiKey(business.id, { revoked: true });
    await expect(await getIntake(revoked.apiKey, mine.id)).toHaveStatus(401);
  });

  it("DELETE answers 204, then 404", async () => {
    const doomed = await createIntake(apiKey, { name: "doomed" });
    await expect(await deleteIntake(apiKey, doomed.id)).toHaveStatus(204);
    await expectError(await deleteIntake(apiKey, doomed.id), 404, NOT_FOUND, { code: "not_found", param: undefined });
    await expect(await getIntake(apiKey, doomed.id)).toHaveStatus(404);
  });
});

describe("PATCH /api/v1/intakes/{id}", async () => {
  const { business, apiKey } = await createBusiness();
  const OLD = "2020-01-01T00:00:00.000Z";

  /** A fresh intake whose updatedAt is far in the past, so that any write shows without waiting. */
  async function fresh() {
    await db.delete(intakes).where(eq(intakes.businessId, business.id));
    const created = await createIntake(apiKey);
    await db.update(intakes).set({ updatedAt: OLD }).where(eq(intakes.id, created.id));
    return { ...created, updatedAt: OLD };
  }
  const rowOf = (id: number) => db.select().from(intakes).where(eq(intakes.id, id)).get();

  it("changes nothing when the intake read is sent back whole (name, enabled, id and timestamps included)", async () => {
    const intake = await fresh();
    const response = await patchIntake(apiKey, intake.id, intake);
    await expect(response).toHaveStatus(200);
    expect(await json(response)).toEqual(intake);
    expect(await rowOf(intake.id)).toMatchObject({ version: 1, updatedAt: OLD, enabled: false });
  });

  it('changes nothing for an empty body, or for "required": false left out instead of sent', async () => {
    const intake = await fresh();
    expect(await json(await patchIntake(apiKey, intake.id, {}))).toEqual(intake);
    const fields = intake.fields.map((field) => (field.required ? field : { ...field, required: undefined }));
    expect(await json(await patchIntake(apiKey, intake.id, { fields }))).toEqual(intake);
    const withNulls = intake.fields.map((field) => ({ help: null, ...field }));
    expect(await json(await patchIntake(apiKey, intake.id, { fields: withNulls }))).toEqual(intake);
    expect(await rowOf(intake.id)).toMatchObject({ version: 1, updatedAt: OLD });
  });

  it.each([
    ["the title", (i: Intake) => ({ title: `${i.title}!` })],
    ["the description", (i: Intake) => ({ description: `${i.description} Also for extensions.` })],
    ["a question added", (i: Intake) => ({ fields: [...i.fields, question({ id: "extra", required: false })] })],
    ["a question removed", (i: Intake) => ({ fields: i.fields.slice(0, 2) })],
    ["a label changed", (i: Intake) => ({ fields: i.fields.map((f, n) => (n === 0 ? { ...f, label: "Name?" } : f)) })],
    ["required changed", (i: Intake) => ({ fields: i.fields.map((f) => ({ ...f, required: true })) })],
    ["help added", (i: Intake) => ({ fields: i.fields.map((f, n) => (n === 1 ? { ...f, help: "For replies" } : f)) })],
    [
      "a choice changed",
      (i: Intake) => ({ fields: i.fields.map((f) => (f.options ? { ...f, options: ["A", "B"] } : f)) }),
    ],
    ["questions moved", (i: Intake) => ({ fields: [...i.fields].reverse() })],
  ])("stores a change of %s: next version, switched off, updatedAt now", async (_case, change) => {
    const intake = await fresh();
    const before = new Date().toISOString();
    const response = await patchIntake(apiKey, intake.id, change(intake));
    await expect(response).toHaveStatus(200);
    const body = await json<Intake>(response);
    expect(body).toEqual({ ...intake, ...change(intake), updatedAt: expect.stringMatching(TIMESTAMP) });
    expect(body.updatedAt >= before).toBe(true);
    expect(body.enabled).toBe(false);
    expect(await rowOf(intake.id)).toMatchObject({ version: 2, enabled: false, approvedVersion: null });
    expect(await json(await getIntake(apiKey, intake.id))).toEqual(body);
  });

  it("keeps what is left out: a PATCH of the description keeps the title and the questions", async () => {
    const intake = await fresh();
    const body = await json<Intake>(
      await patchIntake(apiKey, intake.id, { description: "Only for quotes on kitchens and bathrooms." }),
    );
    expect(body.title).toBe(intake.title);
    expect(body.fields).toEqual(intake.fields);
    expect(body.description).toBe("Only for quotes on kitchens and bathrooms.");
  });

  it("accepts name and enabled sent back unchanged alongside a change", async () => {
    const intake = await fresh();
    const response = await patchIntake(apiKey, intake.id, { name: intake.name, enabled: false, title: "New title" });
    await expect(response).toHaveStatus(200);
    expect((await json<Intake>(response)).title).toBe("New title");
  });

  it.each([
    ["a different name", (i: Intake) => ({ name: `${i.name}_x` }), "name", /cannot be changed after creation/],
    ["a name of another type", () => ({ name: 7 }), "name", /must be a string/],
    ["enabled true", () => ({ enabled: true, title: "Switch me on" }), "enabled", /only the business owner/],
    ["enabled not a boolean", () => ({ enabled: "false" }), "enabled", /must be a boolean/],
    ["a title of 2 characters", () => ({ title: "ab" }), "title", /at least 3/],
    ["a description of 501 characters", () => ({ description: chars(501) }), "description", /at most 500/],
    ["an empty list of questions", () => ({ fields: [] }), "fields", /at least 1 item/],
    [
      "no required question",
      (i: Intake) => ({ fields: i.fields.map((f) => ({ ...f, required: false })) }),
      "fields",
      /required/,
    ],
    [
      "options on a text question",
      (i: Intake) => ({ fields: i.fields.map((f, n) => (n === 1 ? { ...f, options: ["a", "b"] } : f)) }),
      "fields[1].options",
      /allowed only/,
    ],
    [
      "a repeated id",
      (i: Intake) => ({ fields: [...i.fields, { ...i.fields[0], required: false }] }),
      "fields[3].id",
      /repeats "full_name"/,
    ],
  ])("refuses %s with 400 naming the field, and stores nothing", async (_case, change, field, sentence) => {
    const intake = await fresh();
    await expectInvalid(await patchIntake(apiKey, intake.id, change(intake)), field, sentence);
    expect(await rowOf(intake.id)).toMatchObject({ version: 1, updatedAt: OLD, title: intake.title });
  });

  it("refuses a body that is not an object", async () => {
    const intake = await fresh();
    await expectInvalid(await patchIntake(apiKey, intake.id, []), null, /must be an object/);
  });

  it("counts versions: each real change is one more, a repeat of it none", async () => {
    const intake = await fresh();
    await patchIntake(apiKey, intake.id, { title: "Second title" });
    await patchIntake(apiKey, intake.id, { title: "Second title" });
    await patchIntake(apiKey, intake.id, { title: "Third title" });
    expect((await rowOf(intake.id))?.version).toBe(3);
  });
});

describe("question ids that name what every object inherits (docs/intakes.md, Validation)", async () => {
  const { business, apiKey } = await createBusiness();
  const existing = await createIntake(apiKey);
  /** The names of Object.prototype, and `prototype`: the list action parameter names are checked against too. */
  const NOT_DATA = [...Object.getOwnPropertyNames(Object.prototype), "prototype"];
  const sentence = (path: string) =>
    `The field "${path}" is a name every object inherits, which a question id may not have.`;

  it.each(NOT_DATA)("POST refuses a question id %s with 400 naming it, and stores nothing", async (id) => {
    const response = await postIntake(apiKey, intakeBody(second(question({ id }))));
    expect({ status: response.status, body: await json(response) }).toEqual({
      status: 400,
      body: {
        error: sentence("fields[1].id"),
        code: "parameter_invalid",
        param: "fields[1].id",
        field: "fields[1].id",
        request_id: response.headers.get("X-Request-Id"),
      },
    });
    expect(await db.select().from(intakes).where(eq(intakes.businessId, business.id))).toHaveLength(1);
  });

  it.each(NOT_DATA)("PATCH refuses a question id %s with 400 naming it, and changes nothing", async (id) => {
    const fields = [...existing.fields, question({ id, required: false })];
    const response = await patchIntake(apiKey, existing.id, { fields });
    expect({ status: response.status, body: await json(response) }).toEqual({
      status: 400,
      body: {
        error: sentence("fields[3].id"),
        code: "parameter_invalid",
        param: "fields[3].id",
        field: "fields[3].id",
        request_id: response.headers.get("X-Request-Id"),
      },
    });
    expect(await db.select().from(intakes).where(eq(intakes.id, existing.id)).get()).toMatchObject({
      version: 1,
      fields: existing.fields,
    });
  });

  it.each(["constructors", "proto", "prototype_id", "to_string", "value_of", "length", "name"])(
    "accepts %s, a name of data",
    async (id) => {
      const response = await postIntake(apiKey, intakeBody(second(question({ id }))));
      await expect(response).toHaveStatus(201);
      const created = await json<Intake>(response);
      expect(created.fields[1]?.id).toBe(id);
      await expect(await deleteIntake(apiKey, created.id)).toHaveStatus(204);
    },
  );
});
