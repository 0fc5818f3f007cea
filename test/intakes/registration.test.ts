import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { intakes } from "../../src/db/schema";
import { createApiKey, createBusiness, db } from "../helpers/fixtures";
import { json } from "../helpers/http";
import {
  createIntake,
  deleteIntake,
  getIntake,
  type Intake,
  intakeBody,
  postIntake,
  TIMESTAMP,
} from "../helpers/intakes";
import { chars, EMOJI, expectInvalid, name, question, questions, second, select } from "../helpers/intakes-api";

describe("POST /api/v1/intakes", async () => {
  const { business, apiKey } = await createBusiness();

  /** Registers the body and removes it again, so that the 5-intake limit never gets in the way. */
  async function expectAccepted(body: Record<string, unknown>) {
    const response = await postIntake(apiKey, body);
    await expect(response).toHaveStatus(201);
    const created = await json<Intake>(response);
    await expect(await deleteIntake(apiKey, created.id)).toHaveStatus(204);
    return created;
  }

  it("answers 201 with exactly the intake, enabled false, questions normalised", async () => {
    const before = new Date().toISOString();
    const response = await postIntake(apiKey, {
      name: "quote_request",
      title: "Quote request",
      description: "When a customer asks for a renovation quote. Not for repairs or existing orders.",
      fields: [
        { id: "full_name", label: "What is your name?", type: "text", required: true },
        { id: "email", label: "Which email address?", type: "email", required: false, help: "We reply there" },
        { id: "budget", label: "Budget?", type: "select", options: ["Low", "High"] },
      ],
    });
    await expect(response).toHaveStatus(201);
    const body = await json<Intake>(response);
    expect(Object.keys(body)).toEqual([
      "id",
      "name",
      "title",
      "description",
      "fields",
      "enabled",
      "createdAt",
      "updatedAt",
    ]);
    expect(body).toEqual({
      id: expect.any(Number),
      name: "quote_request",
      title: "Quote request",
      description: "When a customer asks for a renovation quote. Not for repairs or existing orders.",
      fields: [
        { id: "full_name", label: "What is your name?", type: "text", required: true },
        { id: "email", label: "Which email address?", type: "email", required: false, help: "We reply there" },
        { id: "budget", label: "Budget?", type: "select", required: false, options: ["Low", "High"] },
      ],
      enabled: false,
      createdAt: expect.stringMatching(TIMESTAMP),
      updatedAt: body.createdAt,
    });
    expect(body.createdAt >= before).toBe(true);
    expect(Object.keys(body.fields[2] ?? {})).toEqual(["id", "label", "type", "required", "options"]);
    expect(await json(await getIntake(apiKey, body.id))).toEqual(body);

    const row = await db.select().from(intakes).where(eq(intakes.id, body.id)).get();
    expect(row).toMatchObject({
      businessId: business.id,
      enabled: false,
      version: 1,
      approvedVersion: null,
      approvedContent: null,
      oauthGrantId: null,
    });
    expect(row?.apiKeyId).toEqual(expect.any(Number));
    await deleteIntake(apiKey, body.id);
  });

  it("ignores unknown keys, at the top and in questions, and never stores them", async () => {
    const other = await createBusiness();
    const created = await expectAccepted({
      ...intakeBody({ fields: [{ ...question(), colour: "red", options: null, help: null }] }),
      id: 999_999,
      enabled: true,
      business_id: other.business.id,
      createdAt: "2000-01-01T00:00:00.000Z",
      version: 7,
    });
    expect(created.id).not.toBe(999_999);
    expect(created.enabled).toBe(false);
    expect(created.createdAt).not.toBe("2000-01-01T00:00:00.000Z");
    expect(created.fields).toEqual([{ id: "q", label: "Question?", type: "text", required: true }]);
  });

  it('stores a question without "required" as required false, and an empty or blank help as no help', async () => {
    const created = await expectAccepted(
      intakeBody({
        fields: [
          question(),
          { id: "note", label: "Anything else?", type: "textarea", help: "" },
          { id: "more", label: "More?", type: "text", help: "   " },
        ],
      }),
    );
    expect(created.fields.slice(1)).toEqual([
      { id: "note", label: "Anything else?", type: "textarea", required: false },
      { id: "more", label: "More?", type: "text", required: false },
    ]);
  });

  it("accepts the largest intake the tables allow: every text, list and choice at its maximum", async () => {
    const fields = Array.from({ length: 12 }, (_, i) => ({
      id: `q${i}${"a".repeat(40 - String(i).length - 1)}`,
      label: chars(80, String(i % 10)),
      type: "select",
      required: true,
      options: Array.from({ length: 20 }, (_, n) => `${String(n).padStart(2, "0")}${chars(78, "x")}`),
      help: chars(200, "h"),
    }));
    const body = { name: name(40), title: chars(80), description: chars(500), fields };
    expect(JSON.stringify(body).length).toBeLessThan(64 * 1024);
    const created = await expectAccepted(body);
    expect(created.fields).toEqual(fields);
  });

  describe("the Intake table: every rule, the valid boundary and the first invalid value on each side", () => {
    it.each([
      ["name of 3 characters", { name: "abc" }],
      ["name of 40 characters", { name: name(40) }],
      ["name with digits and underscores", { name: "q2_form_" }],
      ["title of 3 characters", { title: "abc" }],
      ["title of 80 characters", { title: chars(80) }],
      ["title of 80 emoji (160 UTF-16 units, 80 characters)", { title: chars(80, EMOJI) }],
      ["description of 20 characters", { description: chars(20) }],
      ["description of 500 characters", { description: chars(500) }],
      ["description of 500 accented characters", { description: chars(500, "é") }],
      ["1 question", { fields: questions(1) }],
      ["12 questions", { fields: questions(12) }],
    ])("accepts %s", async (_case, overrides) => {
      await expectAccepted(intakeBody(overrides));
    });

    it.each([
      ["name of 2 characters", { name: "ab" }, "name", /at least 3 characters/],
      ["name of 41 characters", { name: name(41) }, "name", /at most 40 characters/],
      ["name starting with a digit", { name: "1quote" }, "name", /starting with a letter/],
      ["name starting with an underscore", { name: "_quote" }, "name", /starting with a letter/],
      ["name with an upper-case letter", { name: "Quote" }, "name", /lower-case/],
      ["name with a hyphen", { name: "quote-request" }, "name", /lower-case/],
      ["name with a space", { name: "quote request" }, "name", /lower-case/],
      ["name missing", { name: undefined }, "name", /is required/],
      ["name not a string", { name: 12 }, "name", /must be a string/],
      ["title of 2 characters", { title: "ab" }, "title", /at least 3 characters/],
      ["title of 81 characters", { title: chars(81) }, "title", /at most 80 characters/],
      ["title of 81 emoji", { title: chars(81, EMOJI) }, "title", /at most 80 characters/],
      ["title of spaces only", { title: "     " }, "title", /must not be blank/],
      ["title missing", { title: undefined }, "title", /is required/],
      ["description of 19 characters", { description: chars(19) }, "description", /at least 20 characters/],
      ["description of 501 characters", { description: chars(501) }, "description", /at most 500 characters/],
      ["description of spaces only", { description: chars(30, " ") }, "description", /must not be blank/],
      ["description missing", { description: undefined }, "description", /is required/],
      ["no questions", { fields: [] }, "fields", /at least 1 item/],
      ["13 questions", { fields: questions(13) }, "fields", /at most 12 items/],
      [
        "no required question",
        { fields: [question({ required: false }), question({ id: "b", required: false })] },
        "fields",
        /at least one question with "required": true/,
      ],
      ["fields not a list", { fields: { q: question() } }, "fields", /must be an array/],
      ["fields missing", { fields: undefined }, "fields", /is required/],
      ["a question that is not an object", { fields: [question(), "Your name?"] }, "fields[1]", /must be an object/],
    ])("refuses %s", async (_case, overrides, field, sentence) => {
      await expectInvalid(await postIntake(apiKey, intakeBody(overrides)), field, sentence);
    });
  });

  describe("the Intake field table", () => {
    it.each([
      ["an id of 1 character", second(question({ id: "a" }))],
      ["an id of 40 characters", second(question({ id: name(40) }))],
      ["a label of 1 character", second(question({ id: "b", label: "?" }))],
      ["a label of 80 characters", second(question({ id: "b", label: chars(80) }))],
      ["a label of 80 emoji", second(question({ id: "b", label: chars(80, EMOJI) }))],
      ...["text", "textarea", "number", "email", "phone", "date"].map(
        (type) => [`type ${type}`, second(question({ id: "b", type }))] as [string, { fields: unknown[] }],
      ),
      ["type select with 2 choices", second(select(["Yes", "No"]))],
      ["type select with 20 choices", second(select(Array.from({ length: 20 }, (_, i) => `Choice ${i}`)))],
      ["a choice of 1 character", second(select(["a", "b"]))],
      ["a choice of 80 characters", second(select(["a", chars(80, "b")]))],
      ["a choice of 80 emoji", second(select(["a", chars(80, EMOJI)]))],
      ["choices that differ", second(select(["Red", "Reds", "Re d"]))],
      ["help of 200 characters", second(question({ id: "b", help: chars(200) }))],
      ["help of 200 emoji", second(question({ id: "b", help: chars(200, EMOJI) }))],
      ["an optional question", second(question({ id: "b", required: false }))],
      ["options null on a text question (no options)", second(question({ id: "b", options: null }))],
    ])("accepts %s", async (_case, overrides) => {
      await expectAccepted(intakeBody(overrides));
    });

    it.each([
      ["an empty id", second(question({ id: "" })), "fields[1].id", /at least 1 character/],
      ["an id of 41 characters", second(question({ id: name(41) })), "fields[1].id", /at most 40 characters/],
      ["an id starting with a digit", second(question({ id: "1st" })), "fields[1].id", /starting with a letter/],
      ["an id with an upper-case letter", second(question({ id: "Email" })), "fields[1].id", /lower-case/],
      ["an id with a hyphen", second(question({ id: "e-mail" })), "fields[1].id", /lower-case/],
      ["a missing id", second(question({ id: undefined })), "fields[1].id", /is required/],
      [
        "an id used twice (the later one is named)",
        { fields: [question({ id: "a" }), question({ id: "b" }), question({ id: "a" })] },
        "fields[2].id",
        /repeats "a", the id of fields\[0\]/,
      ],
      ["an empty label", second(question({ id: "b", label: "" })), "fields[1].label", /at least 1 character/],
      [
        "a label of 81 characters",
        second(question({ id: "b", label: chars(81) })),
        "fields[1].label",
        /at most 80 characters/,
      ],
      ["a label of spaces only", second(question({ id: "b", label: "   " })), "fields[1].label", /must not be blank/],
      ["a missing label", second(question({ id: "b", label: undefined })), "fields[1].label", /is required/],
      ["an unknown type", second(question({ id: "b", type: "string" })), "fields[1].type", /must be one of "text"/],
      ["a type in capitals", second(question({ id: "b", type: "Text" })), "fields[1].type", /must be one of/],
      ["a missing type", second(question({ id: "b", type: undefined })), "fields[1].type", /is required/],
      ["required not a boolean", second(question({ id: "b", required: "yes" })), "fields[1].required", /boolean/],
      [
        "options on a text question",
        second(question({ id: "b", options: ["a", "b"] })),
        "fields[1].options",
        /allowed only on a question of type "select"/,
      ],
      [
        "options on an email question",
        second(question({ id: "b", type: "email", options: ["a", "b"] })),
        "fields[1].options",
        /allowed only/,
      ],
      ["a select without options", second(select(undefined)), "fields[1].options", /is required on a question of type/],
      ["a select with 1 choice", second(select(["Only"])), "fields[1].options", /at least 2 items/],
      [
        "a select with 21 choices",
        second(select(Array.from({ length: 21 }, (_, i) => `Choice ${i}`))),
        "fields[1].options",
        /at most 20 items/,
      ],
      ["options not a list", second(select("Yes, No")), "fields[1].options", /must be an array/],
      ["an empty choice", second(select(["", "b"])), "fields[1].options[0]", /at least 1 character/],
      ["a choice of 81 characters", second(select(["a", chars(81)])), "fields[1].options[1]", /at most 80 characters/],
      ["a choice of spaces only", second(select(["a", "  "])), "fields[1].options[1]", /must not be blank/],
      ["a choice that is not text", second(select(["a", 2])), "fields[1].options[1]", /must be a string/],
      [
        "the same choice twice",
        second(select(["Red", "Blue", "Red"])),
        "fields[1].options[2]",
        /repeats the choice "Red" of options\[0\]/,
      ],
      ["the same choice in another case", second(select(["Red", "Blue", "rED"])), "fields[1].options[2]", /repeats/],
      ["the same choice with a space around it", second(select(["Red", "Red "])), "fields[1].options[1]", /repeats/],
      ["help of 201 characters", second(question({ id: "b", help: chars(201) })), "fields[1].help", /at most 200/],
      ["help not a string", second(question({ id: "b", help: 3 })), "fields[1].help", /must be a string/],
    ])("refuses %s", async (_case, overrides, field, sentence) => {
      await expectInvalid(await postIntake(apiKey, intakeBody(overrides)), field, sentence);
    });

    it("names the first problem in body order", async () => {
      const response = await postIntake(apiKey, intakeBody({ title: "ab", fields: [question({ id: "" })] }));
      await expectInvalid(response, "title");
      const inFields = await postIntake(
        apiKey,
        intakeBody({ fields: [question(), question({ id: "b", label: "" }), select(["x"])] }),
      );
      await expectInvalid(inFields, "fields[1].label");
    });
  });

  it.each([
    ["an array", []],
    ["a string", '"intake"'],
    ["null", "null"],
  ])("refuses a body that is %s with 400 and field null", async (_case, body) => {
    await expectInvalid(await postIntake(apiKey, body), null, /^The request body must be an object\.$/);
  });

  it("refuses malformed JSON with 400", async () => {
    await expectInvalid(await postIntake(apiKey, "{not json"), null, /not valid JSON/, "invalid_json");
  });

  it("refuses a name already used in the business, by any key, with 400 naming it; other businesses may reuse it", async () => {
    const first = await createIntake(apiKey, { name: "callback" });
    const sameKey = await postIntake(apiKey, intakeBody({ name: "callback" }));
    await expectInvalid(sameKey, "name", /"callback", which another intake of this business already uses/);
    const secondKey = await createApiKey(business.id);
    await expectInvalid(await postIntake(secondKey.apiKey, intakeBody({ name: "callback" })), "name");
    const elsewhere = await createBusiness();
    await expect(await postIntake(elsewhere.apiKey, intakeBody({ name: "callback" }))).toHaveStatus(201);
    await deleteIntake(apiKey, first.id);
    // Once removed, the name is free again.
    await expect(await postIntake(secondKey.apiKey, intakeBody({ name: "callback" }))).toHaveStatus(201);
  });

  it("stores one intake when the same name is registered twice at once", async () => {
    const { apiKey: key, business: shop } = await createBusiness();
    const responses = await Promise.all([
      postIntake(key, intakeBody({ name: "twin" })),
      postIntake(key, intakeBody({ name: "twin" })),
    ]);
    expect(responses.map((r) => r.status).sort()).toEqual([201, 400]);
    expect(await db.$count(intakes, eq(intakes.businessId, shop.id))).toBe(1);
  });

  it("requires a credential", async () => {
    await expect(await postIntake(undefined, intakeBody())).toHaveStatus(401);
  });
});
