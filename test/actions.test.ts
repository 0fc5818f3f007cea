import { env } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { database } from "../src/db/client";
import { actionCalls, actions, apiKeys } from "../src/db/schema";
import { actionsForSecretary, reviewedVersion, switchAction } from "../src/domain/actions/registration";
import { CHAT_CHANNELS } from "../src/domain/secretary/channels";
import { createApiKey, createBusiness, db } from "./helpers/fixtures";
import { call, expectError, expectMissingCredential, json } from "./helpers/http";

type Parameters = {
  type: "object";
  properties: Record<string, { type: string; description: string; enum?: unknown[] }>;
  required?: string[];
};
type Action = {
  id: number;
  name: string;
  title: string;
  description: string;
  url: string;
  parameters: Parameters;
  enabled: boolean;
  source: string;
  failureCount: number;
  lastCalledAt: string | null;
  lastSuccessAt: string | null;
  lastFailureAt: string | null;
  createdAt: string;
  updatedAt: string;
};
type Created = Action & { secret: string };
type WithCalls = Action & { calls: Record<string, unknown>[] };

const ACTION_FIELDS = [
  "changePending",
  "createdAt",
  "description",
  "enabled",
  "failureCount",
  "id",
  "lastCalledAt",
  "lastFailureAt",
  "lastSuccessAt",
  "name",
  "parameters",
  "source",
  "title",
  "updatedAt",
  "url",
];
// `whsec_` + 32 random bytes in standard base64, the form Standard Webhooks libraries decode (DESIGN.md).
const SECRET = /^whsec_[A-Za-z0-9+/]{43}=$/;
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const ACTION_URL = "https://partner.example/actions/check-slots";
const DESCRIPTION = "Checks which appointment slots are free on a given day, for customers asking about availability.";
const PARAMETERS: Parameters = {
  type: "object",
  properties: {
    date: { type: "string", description: "The day to check, YYYY-MM-DD" },
    party_size: { type: "integer", description: "How many people come", enum: [1, 2, 3, 4] },
    budget: { type: "number", description: "The most the customer will pay" },
    vegan: { type: "boolean", description: "Whether only vegan dishes count" },
    area: { type: "string", description: "The part of town", enum: ["north", "south"] },
  },
  required: ["date", "party_size"],
};
const NO_PARAMETERS = { type: "object", properties: {}, required: [] };
const NOT_FOUND = "No action with that id exists for this business.";
const LIMIT_SENTENCE = "A business can have at most 10 connected actions: delete one before adding another.";
const PRIVATE = "must be a public address, not a private, loopback or reserved one";

let counter = 0;
const uniqueName = (prefix = "action") => `${prefix}_${(counter++).toString(36)}`;
const validBody = (overrides: Record<string, unknown> = {}) => ({
  name: uniqueName(),
  title: "Check free slots",
  description: DESCRIPTION,
  url: ACTION_URL,
  parameters: PARAMETERS,
  ...overrides,
});

const post = (key: string | undefined, body: unknown) => call("/api/v1/actions", { key, method: "POST", body });
const list = (key: string | undefined) => call("/api/v1/actions", { key });
const getOne = (key: string | undefined, id: number | string) => call(`/api/v1/actions/${id}`, { key });
const patch = (key: string | undefined, id: number | string, body: unknown) =>
  call(`/api/v1/actions/${id}`, { key, method: "PATCH", body });
const remove = (key: string | undefined, id: number | string) =>
  call(`/api/v1/actions/${id}`, { key, method: "DELETE" });

async function create(key: string, overrides: Record<string, unknown> = {}) {
  const response = await post(key, validBody(overrides));
  if (response.status !== 201) throw new Error(`create failed: ${response.status} ${await response.text()}`);
  return json<Created>(response);
}

const rowOf = (id: number) => db.select().from(actions).where(eq(actions.id, id)).get();
const rowsOfBusiness = (businessId: string) => db.select().from(actions).where(eq(actions.businessId, businessId));

/** A POST through the Worker with the production outbound policy (ALLOW_LOOPBACK_URLS unset). */
const postInProduction = (key: string, body: unknown) =>
  call("/api/v1/actions", { key, method: "POST", body, bindings: { ALLOW_LOOPBACK_URLS: "" } });

describe("POST /api/v1/actions", async () => {
  const { business, apiKey } = await createBusiness();

  it("answers 201 with exactly the action's fields and its secret, switched off, from an API key", async () => {
    const before = new Date().toISOString();
    const response = await post(apiKey, validBody({ name: "check_slots" }));
    expect(response.status).toBe(201);
    const body = await json<Created>(response);
    expect(Object.keys(body).sort()).toEqual([...ACTION_FIELDS, "secret"].sort());
    expect(body).toEqual({
      id: expect.any(Number),
      name: "check_slots",
      title: "Check free slots",
      description: DESCRIPTION,
      url: ACTION_URL,
      parameters: PARAMETERS,
      enabled: false,
      changePending: false,
      source: "api_key",
      failureCount: 0,
      lastCalledAt: null,
      lastSuccessAt: null,
      lastFailureAt: null,
      createdAt: expect.stringMatching(TIMESTAMP),
      updatedAt: body.createdAt,
      secret: expect.stringMatching(SECRET),
    });
    expect(body.createdAt >= before).toBe(true);
  });

  it("stores the secret (it keys the HMAC), the business and the creating key", async () => {
    const second = await createApiKey(business.id);
    const created = await create(second.apiKey);
    const row = await rowOf(created.id);
    expect(row).toMatchObject({
      businessId: business.id,
      secret: created.secret,
      enabled: false,
      apiKeyId: second.apiKeyId,
      oauthGrantId: null,
    });
  });

  it("shows the secret once: GET list and GET one never carry it; GET one adds calls: []", async () => {
    const created = await create(apiKey);
    const listed = await list(apiKey);
    expect(listed.status).toBe(200);
    const listBody = await json<{ data: Action[] }>(listed);
    expect(Object.keys(listBody)).toEqual(["data"]);
    const shown = listBody.data.find((action) => action.id === created.id);
    const { secret, ...withoutSecret } = created;
    expect(shown).toEqual(withoutSecret);
    for (const action of listBody.data) expect(Object.keys(action).sort()).toEqual(ACTION_FIELDS);

    const one = await getOne(apiKey, created.id);
    expect(one.status).toBe(200);
    const oneBody = await json<WithCalls>(one);
    expect(Object.keys(oneBody).sort()).toEqual([...ACTION_FIELDS, "calls"].sort());
    expect(oneBody).toEqual({ ...withoutSecret, calls: [] });

    for (const text of [JSON.stringify(listBody), JSON.stringify(oneBody)]) {
      expect(text).not.toContain(secret);
      expect(text).not.toContain("whsec_");
    }
  });

  it("gives every action its own secret", async () => {
    const first = await create(apiKey);
    const second = await create(apiKey);
    expect(first.secret).toMatch(SECRET);
    expect(second.secret).toMatch(SECRET);
    expect(first.secret).not.toBe(second.secret);
  });

  it('stores { type: "object", properties: {}, required: [] } when parameters are omitted', async () => {
    const { parameters: _, ...body } = validBody();
    const response = await post(apiKey, body);
    expect(response.status).toBe(201);
    const created = await json<Created>(response);
    expect(created.parameters).toEqual(NO_PARAMETERS);
    expect((await rowOf(created.id))?.parameters).toEqual(NO_PARAMETERS);
    expect((await json<WithCalls>(await getOne(apiKey, created.id))).parameters).toEqual(NO_PARAMETERS);
  });

  it("stores and answers required: [] when parameters come without it, on POST and on PATCH", async () => {
    const { required: _, ...withoutRequired } = PARAMETERS;
    const expected = { ...withoutRequired, required: [] };
    const created = await create(apiKey, { parameters: withoutRequired });
    expect(created.parameters).toEqual(expected);
    expect((await rowOf(created.id))?.parameters).toEqual(expected);
    expect((await json<WithCalls>(await getOne(apiKey, created.id))).parameters).toEqual(expected);
    const listed = (await json<{ data: Action[] }>(await list(apiKey))).data.find((a) => a.id === created.id);
    expect(listed?.parameters).toEqual(expected);

    const patched = await create(apiKey);
    const body = await json<Action>(await patch(apiKey, patched.id, { parameters: withoutRequired }));
    expect(body.parameters).toEqual(expected);
    expect((await rowOf(patched.id))?.parameters).toEqual(expected);
  });

  it("ignores keys the partner may not set (enabled, id, business_id, secret, source, failureCount) and stores none", async () => {
    const other = await createBusiness();
    const response = await post(
      apiKey,
      validBody({
        enabled: true,
        id: 999_999,
        business_id: other.business.id,
        secret: "actsec_chosen-by-the-partner",
        source: "oauth_app",
        failureCount: 7,
        lastCalledAt: "2000-01-01T00:00:00.000Z",
      }),
    );
    expect(response.status).toBe(201);
    const body = await json<Created>(response);
    expect(body).toMatchObject({ enabled: false, source: "api_key", failureCount: 0, lastCalledAt: null });
    expect(body.id).not.toBe(999_999);
    expect(body.secret).toMatch(SECRET);
    expect(body.secret).not.toBe("actsec_chosen-by-the-partner");
    const row = await rowOf(body.id);
    expect(row).toMatchObject({ businessId: business.id, enabled: false, secret: body.secret, failureCount: 0 });
    expect(await rowOf(999_999)).toBeUndefined();
    expect(await rowsOfBusiness(other.business.id)).toEqual([]);
    expect((await json<WithCalls>(await getOne(apiKey, body.id))).enabled).toBe(false);
  });

  it("stores nothing when it refuses", async () => {
    const fresh = await createBusiness();
    await post(fresh.apiKey, validBody({ name: "Bad-Name" }));
    await post(fresh.apiKey, validBody({ url: "https://10.0.0.1/x" }));
    await post(fresh.apiKey, validBody({ description: "too short" }));
    await post(fresh.apiKey, validBody({ parameters: { type: "object", properties: {}, required: ["x"] } }));
    expect(await rowsOfBusiness(fresh.business.id)).toEqual([]);
  });
});

describe("POST /api/v1/actions validation (400 with a sentence naming the field)", () => {
  describe("name: 1 to 64 of a-z 0-9 _, starting with a letter, unique per business", async () => {
    const { apiKey } = await createBusiness();
    const NAME_RULE =
      'The field "name" must be 1 to 64 lower-case letters, digits or underscores, starting with a letter.';

    it.each([
      ["64 characters", `a${"b".repeat(63)}`],
      ["one letter", "a"],
      ["letters, digits and underscores", "check_slots_2"],
    ])("accepts %s", async (_case, name) => {
      const response = await post(apiKey, validBody({ name }));
      expect(response.status).toBe(201);
      expect((await json<Created>(response)).name).toBe(name);
    });

    it.each([
      ["65 characters", `a${"b".repeat(64)}`],
      ["an upper-case letter", "checkSlots"],
      ["all upper case", "CHECK_SLOTS"],
      ["a leading digit", "1slots"],
      ["a leading underscore", "_slots"],
      ["a hyphen", "check-slots"],
      ["a space", "check slots"],
      ["a dot", "check.slots"],
      ["an accented letter", "créneaux"],
      ["an empty string", ""],
    ])("refuses %s", async (_case, name) => {
      await expectError(await post(apiKey, validBody({ name })), 400, NAME_RULE);
    });

    it.each([
      ["missing", undefined, 'The field "name" is required.'],
      ["a number", 42, 'The field "name" must be a string.'],
      ["null", null, 'The field "name" must be a string.'],
    ])("refuses a name that is %s", async (_case, name, sentence) => {
      await expectError(await post(apiKey, validBody({ name })), 400, sentence);
    });

    it("refuses a name already used in the business, naming the field; another business may use it", async () => {
      const { business, apiKey: key } = await createBusiness();
      await create(key, { name: "lookup_order" });
      const second = await createApiKey(business.id);
      for (const k of [key, second.apiKey]) {
        await expectError(
          await post(k, validBody({ name: "lookup_order" })),
          400,
          'The field "name" is "lookup_order", which another action of this business already uses.',
        );
      }
      expect(await rowsOfBusiness(business.id)).toHaveLength(1);
      const other = await createBusiness();
      expect((await post(other.apiKey, validBody({ name: "lookup_order" }))).status).toBe(201);
    });

    it("frees the name when the action is deleted", async () => {
      const created = await create(apiKey, { name: "reused_name" });
      expect((await post(apiKey, validBody({ name: "reused_name" }))).status).toBe(400);
      expect((await remove(apiKey, created.id)).status).toBe(204);
      expect((await post(apiKey, validBody({ name: "reused_name" }))).status).toBe(201);
    });
  });

  describe("title: 1 to 80 characters", async () => {
    const { apiKey } = await createBusiness();

    it("accepts 80 characters, 80 multi-byte characters and 1 character", async () => {
      for (const title of ["t".repeat(80), "é".repeat(80), "😀".repeat(80), "t"]) {
        const response = await post(apiKey, validBody({ title }));
        expect(response.status).toBe(201);
        expect((await json<Created>(response)).title).toBe(title);
      }
    });

    it.each([
      ["empty", "", 'The field "title" must be at least 1 character long.'],
      ["81 characters", "t".repeat(81), 'The field "title" must be at most 80 characters long.'],
      ["81 multi-byte characters", "😀".repeat(81), 'The field "title" must be at most 80 characters long.'],
      ["missing", undefined, 'The field "title" is required.'],
      ["a number", 7, 'The field "title" must be a string.'],
    ])("refuses a title that is %s", async (_case, title, sentence) => {
      await expectError(await post(apiKey, validBody({ title })), 400, sentence);
    });
  });

  describe("description: 20 to 600 characters, counted as code points", async () => {
    const { apiKey } = await createBusiness();
    const RULE = 'The field "description" must be 20 to 600 characters long.';

    it.each([
      ["20 characters", "d".repeat(20)],
      ["600 characters", "d".repeat(600)],
      ['600 two-byte characters ("é")', "é".repeat(600)],
      ["600 characters outside the BMP (1,200 UTF-16 units)", "😀".repeat(600)],
      ["20 mixed multi-byte characters", `${"é".repeat(19)}😀`],
    ])("accepts %s", async (_case, description) => {
      const response = await post(apiKey, validBody({ description }));
      expect(response.status).toBe(201);
      expect((await json<Created>(response)).description).toBe(description);
    });

    it.each([
      ["19 characters", "d".repeat(19)],
      ["19 two-byte characters", "é".repeat(19)],
      ["10 characters outside the BMP (20 UTF-16 units)", "😀".repeat(10)],
      ["601 characters", "d".repeat(601)],
      ['601 two-byte characters ("é")', "é".repeat(601)],
      ["an empty string", ""],
    ])("refuses %s", async (_case, description) => {
      await expectError(await post(apiKey, validBody({ description })), 400, RULE);
    });

    it.each([
      ["missing", undefined, 'The field "description" is required.'],
      ["a number", 12, 'The field "description" must be a string.'],
    ])("refuses a description that is %s", async (_case, description, sentence) => {
      await expectError(await post(apiKey, validBody({ description })), 400, sentence);
    });
  });

  describe("url: a public https address", async () => {
    const { apiKey } = await createBusiness();

    it.each([
      ["http to a public host", "http://partner.example/x", "must use https"],
      ["10.0.0.1", "https://10.0.0.1/x", PRIVATE],
      ["the metadata address", "https://169.254.169.254/", PRIVATE],
      ["192.168.1.1", "https://192.168.1.1/x", PRIVATE],
      ["[fd00::1]", "https://[fd00::1]/", PRIVATE],
      ["[::ffff:10.0.0.1]", "https://[::ffff:10.0.0.1]/", PRIVATE],
      ["127.0.0.2 (loopback, but not the allowed 127.0.0.1)", "https://127.0.0.2/", PRIVATE],
      ["a *.localhost name", "https://app.localhost/x", "must be a public address, not a local name"],
      ["a name without a dot", "https://intranet/x", "must be a public address with a domain name"],
      ["credentials", "https://user:pass@partner.example/x", "must not carry a user name or password"],
      ["a relative path", "/actions/x", "must be an absolute URL"],
      ["an empty string", "", "must be an absolute URL"],
    ])("refuses %s", async (_case, url, problem) => {
      await expectError(await post(apiKey, validBody({ url })), 400, `The field "url" ${problem}.`);
    });

    it.each([
      ["missing", undefined, 'The field "url" is required.'],
      ["a number", 42, 'The field "url" must be a string.'],
    ])("refuses a url that is %s", async (_case, url, sentence) => {
      await expectError(await post(apiKey, validBody({ url })), 400, sentence);
    });

    it("refuses a url over 2048 characters", async () => {
      const url = `https://partner.example/${"a".repeat(2049 - "https://partner.example/".length)}`;
      await expectError(
        await post(apiKey, validBody({ url })),
        400,
        'The field "url" must be at most 2048 characters long.',
      );
    });

    it.each([
      ["http://127.0.0.1:9999/x"],
      ["http://localhost/x"],
      ["https://localhost:8443/x"],
      ["http://[::1]:9999/x"],
    ])("accepts loopback %s, as ALLOW_LOOPBACK_URLS is true in tests", async (url) => {
      const response = await post(apiKey, validBody({ url }));
      expect(response.status).toBe(201);
      expect((await json<Created>(response)).url).toBe(url);
    });

    it.each([["https://93.184.216.34/x"], ["https://partner.example:8443/actions?tenant=7"]])(
      "accepts the public %s",
      async (url) => {
        expect((await post(apiKey, validBody({ url }))).status).toBe(201);
      },
    );

    it.each([
      ["http://127.0.0.1:9999/x", "must use https"],
      ["http://localhost/x", "must use https"],
      ["https://localhost/x", "must be a public address, not a local name"],
      ["https://localhost./", "must be a public address, not a local name"],
      ["https://127.0.0.1/x", PRIVATE],
    ])("refuses %s under the production policy (ALLOW_LOOPBACK_URLS unset)", async (url, problem) => {
      const { business, apiKey: key } = await createBusiness();
      await expectError(await postInProduction(key, validBody({ url })), 400, `The field "url" ${problem}.`);
      expect(await rowsOfBusiness(business.id)).toEqual([]);
    });
  });

  describe("parameters: a flat object schema of at most 8 parameters", async () => {
    const { apiKey } = await createBusiness({ plan: "business" });
    const parameter = (type = "string") => ({ type, description: "A parameter" });
    const manyParameters = (n: number) =>
      Object.fromEntries(Array.from({ length: n }, (_, i) => [`p${i + 1}`, parameter()]));

    it("accepts 8 parameters of every allowed type, with enums that fit their types", async () => {
      const parameters = {
        type: "object",
        properties: {
          ...manyParameters(4),
          count: { type: "integer", description: "A whole number", enum: [1, 2, 3] },
          amount: { type: "number", description: "Any number", enum: [1.5, 2] },
          flag: { type: "boolean", description: "Yes or no", enum: [true] },
          colour: { type: "string", description: "A colour", enum: ["red", "blue"] },
        },
        required: ["p1", "count"],
      };
      const response = await post(apiKey, validBody({ parameters }));
      expect(response.status).toBe(201);
      expect((await json<Created>(response)).parameters).toEqual(parameters);
    });

    it.each([
      [
        'a type other than "object"',
        { type: "array", properties: {} },
        'The field "parameters.type" must be "object".',
      ],
      ["a missing type", { properties: {} }, 'The field "parameters.type" must be "object".'],
      [
        "9 parameters",
        { type: "object", properties: manyParameters(9) },
        'The field "parameters.properties" must define at most 8 parameters.',
      ],
      [
        'a parameter of type "object"',
        { type: "object", properties: { filter: parameter("object") } },
        'The field "parameters.properties.filter.type" must be one of "string", "number", "integer", "boolean".',
      ],
      [
        'a parameter of type "array"',
        { type: "object", properties: { dates: parameter("array") } },
        'The field "parameters.properties.dates.type" must be one of "string", "number", "integer", "boolean".',
      ],
      [
        "nesting with properties inside a parameter",
        {
          type: "object",
          properties: { filter: { ...parameter(), properties: { day: parameter() } } },
        },
        'The field "parameters.properties.filter" has unknown key "properties".',
      ],
      [
        "nesting with items inside a parameter",
        { type: "object", properties: { dates: { ...parameter(), items: parameter() } } },
        'The field "parameters.properties.dates" has unknown key "items".',
      ],
      [
        "a parameter without a description",
        { type: "object", properties: { date: { type: "string" } } },
        'The field "parameters.properties.date.description" is required.',
      ],
      [
        "a parameter with an empty description",
        { type: "object", properties: { date: { type: "string", description: "" } } },
        'The field "parameters.properties.date.description" must be at least 1 character long.',
      ],
      [
        "an integer enum holding 1.5",
        { type: "object", properties: { size: { ...parameter("integer"), enum: [1, 1.5] } } },
        'The field "parameters.properties.size.enum[1]" must be of type integer.',
      ],
      [
        "a string enum holding 3",
        { type: "object", properties: { area: { ...parameter("string"), enum: ["north", 3] } } },
        'The field "parameters.properties.area.enum[1]" must be of type string.',
      ],
      [
        'a number enum holding "2"',
        { type: "object", properties: { amount: { ...parameter("number"), enum: ["2"] } } },
        'The field "parameters.properties.amount.enum[0]" must be of type number.',
      ],
      [
        'a boolean enum holding "yes"',
        { type: "object", properties: { vegan: { ...parameter("boolean"), enum: ["yes"] } } },
        'The field "parameters.properties.vegan.enum[0]" must be of type boolean.',
      ],
      [
        "an empty enum",
        { type: "object", properties: { area: { ...parameter(), enum: [] } } },
        'The field "parameters.properties.area.enum" must have at least 1 item.',
      ],
      [
        "required naming an unknown parameter",
        { type: "object", properties: { date: parameter() }, required: ["date", "guests"] },
        'The field "parameters.required[1]" names "guests", which is not a parameter.',
      ],
      [
        "a parameter that is not an object",
        { type: "object", properties: { date: "string" } },
        'The field "parameters.properties.date" must be an object.',
      ],
      ["parameters as null", null, 'The field "parameters" must be an object.'],
      ["parameters as a string", "date", 'The field "parameters" must be an object.'],
    ])("refuses %s", async (_case, parameters, sentence) => {
      await expectError(await post(apiKey, validBody({ parameters })), 400, sentence);
    });

    it.each([["1abc"], ["a-b"], ["a b"], [""], [`p${"a".repeat(64)}`]])(
      "refuses the parameter name %j, naming parameters",
      async (name) => {
        const parameters = { type: "object", properties: { [name]: parameter() } };
        await expectError(
          await post(apiKey, validBody({ parameters })),
          400,
          `The field "parameters.properties.${name}" names a parameter that is not 1 to 64 letters, digits or underscores starting with a letter.`,
        );
      },
    );
  });

  it("refuses a parameter named twice in required", async () => {
    const { apiKey } = await createBusiness();
    const parameters = {
      type: "object",
      properties: { a: { type: "string", description: "A parameter" } },
      required: ["a", "a"],
    };
    await expectError(
      await post(apiKey, validBody({ parameters })),
      400,
      'The field "parameters.required[1]" names "a" a second time.',
    );
  });

  it("trims the url, title and description, and refuses a description of blanks", async () => {
    const { apiKey } = await createBusiness();
    await expectError(
      await post(apiKey, validBody({ description: " ".repeat(25) })),
      400,
      'The field "description" must be 20 to 600 characters long.',
    );
    const created = await json(
      await post(apiKey, validBody({ url: "  https://partner.example/x  ", title: " Check " })),
    );
    expect(created).toMatchObject({ url: "https://partner.example/x", title: "Check" });
  });

  describe("the body itself", async () => {
    const { apiKey } = await createBusiness();

    it("names malformed JSON as such", async () => {
      await expectError(await post(apiKey, "{not json"), 400, "The request body is not valid JSON.");
    });

    it.each([
      ["an array", "[]"],
      ["null", "null"],
    ])("refuses a body that is %s with 400", async (_case, body) => {
      const response = await post(apiKey, body);
      expect(response.status).toBe(400);
      expect(Object.keys(await json(response))).toEqual(["error"]);
    });
  });
});

describe("parameters that ask for contact details (spec: an intake may ask for email or phone, unlike an action)", async () => {
  const { business, apiKey } = await createBusiness();
  const withParameter = (name: string, description: string) => ({
    type: "object",
    properties: { date: PARAMETERS.properties.date, [name]: { type: "string", description } },
    required: ["date"],
  });
  const EMAIL = "an email address";
  const PHONE = "a phone number";
  const refusal = (name: string, kind: string) =>
    `The field "parameters.properties.${name}" asks for ${kind}: an action may not ask for contact details (an intake may).`;

  const cases = [
    ["named email", "email", "Where the confirmation goes", EMAIL],
    ["named customer_phone", "customer_phone", "To find the booking", PHONE],
    ["named in camel case, customerEmail", "customerEmail", "To find the booking", EMAIL],
    ["named in camel case, whatsappNumber", "whatsappNumber", "To find the booking", PHONE],
    ["described as an e-mail address", "contact", "The customer's e-mail address", EMAIL],
    ["described as a mobile number", "reference", "The mobile number the order was placed with", PHONE],
  ] as const;

  it.each(cases)(
    "POST refuses a parameter %s with 400 naming it, and stores nothing",
    async (_case, name, description, kind) => {
      const before = (await rowsOfBusiness(business.id)).length;
      await expectError(
        await post(apiKey, validBody({ parameters: withParameter(name, description) })),
        400,
        refusal(name, kind),
      );
      expect(await rowsOfBusiness(business.id)).toHaveLength(before);
    },
  );

  it.each(cases)(
    "PATCH refuses a parameter %s with 400 naming it, and changes nothing",
    async (_case, name, description, kind) => {
      const fresh = await createBusiness();
      const created = await create(fresh.apiKey);
      const before = await rowOf(created.id);
      await expectError(
        await patch(fresh.apiKey, created.id, { parameters: withParameter(name, description) }),
        400,
        refusal(name, kind),
      );
      expect(await rowOf(created.id)).toEqual(before);
    },
  );

  it("accepts parameters that ask for no contact detail", async () => {
    const parameters = withParameter("order_number", "The number printed on the receipt");
    const response = await post(apiKey, validBody({ parameters }));
    expect(response.status).toBe(201);
    expect((await json<Created>(response)).parameters).toEqual(parameters);
  });
});

describe("at most 10 actions per business (spec: Limits)", () => {
  it("refuses the 11th with 403 naming 10; deleting one makes room again", async () => {
    const { business, apiKey } = await createBusiness();
    const created: Created[] = [];
    for (let i = 0; i < 10; i++) created.push(await create(apiKey));
    await expectError(await post(apiKey, validBody()), 403, /\b10\b/);
    await expectError(await post(apiKey, validBody()), 403, LIMIT_SENTENCE);
    expect(await rowsOfBusiness(business.id)).toHaveLength(10);
    expect((await json<{ data: Action[] }>(await list(apiKey))).data).toHaveLength(10);

    const [first] = created;
    if (!first) throw new Error("no action created");
    expect((await remove(apiKey, first.id)).status).toBe(204);
    expect((await post(apiKey, validBody())).status).toBe(201);
    expect((await post(apiKey, validBody())).status).toBe(403);
  });

  it("counts every key of the business together, and only that business", async () => {
    const { business, apiKey } = await createBusiness();
    const second = await createApiKey(business.id);
    for (let i = 0; i < 5; i++) await create(apiKey);
    for (let i = 0; i < 5; i++) await create(second.apiKey);
    await expectError(await post(apiKey, validBody()), 403, LIMIT_SENTENCE);
    await expectError(await post(second.apiKey, validBody()), 403, LIMIT_SENTENCE);
    const other = await createBusiness();
    expect((await post(other.apiKey, validBody())).status).toBe(201);
  });

  it("14 concurrent creates on an empty business: exactly 10 × 201, 4 × 403 and 10 rows stored", async () => {
    const { business, apiKey } = await createBusiness();
    const responses = await Promise.all(Array.from({ length: 14 }, () => post(apiKey, validBody())));
    const statuses = responses.map((response) => response.status);
    expect(statuses.filter((status) => status === 201)).toHaveLength(10);
    expect(statuses.filter((status) => status === 403)).toHaveLength(4);
    const bodies = await Promise.all(responses.map((response) => json<Created>(response)));
    const createdIds = bodies.filter((_, i) => statuses[i] === 201).map((body) => body.id);
    for (const body of bodies.filter((_, i) => statuses[i] === 403)) expect(body).toEqual({ error: LIMIT_SENTENCE });

    const rows = await rowsOfBusiness(business.id);
    expect(rows).toHaveLength(10);
    expect(rows.map((row) => row.id).sort((a, b) => a - b)).toEqual([...createdIds].sort((a, b) => a - b));
  });
});

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
    expect(response.status).toBe(200);
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
    await switchAction(db, business.id, created.id, true);
    expect((await json<WithCalls>(await getOne(apiKey, created.id))).enabled).toBe(true);

    const body = await json<Action>(await patch(apiKey, created.id, { url: "https://partner.example/new" }));
    expect(body).toMatchObject({ url: "https://partner.example/new", enabled: false });
    expect((await rowOf(created.id))?.enabled).toBe(false);
    expect((await actionsForSecretary(db, business.id, "whatsapp")).map((a) => a.name)).not.toContain(created.name);
  });

  it("keeps the action on when the same url is sent back, or when only other fields change", async () => {
    const { business, apiKey, created } = await aged();
    await switchAction(db, business.id, created.id, true);
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
      expect(response.status).toBe(200);
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
    expect(response.status).toBe(200);
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
    await switchAction(db, business.id, created.id, true);
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
        'The field "parameters.properties.f" has unknown key "properties".',
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

describe("GET and DELETE /api/v1/actions/{id}, and who sees what", async () => {
  const { business, apiKey } = await createBusiness();
  const other = await createBusiness();

  it("lists the business's actions oldest first, and an empty list for a business without any", async () => {
    const fresh = await createBusiness();
    expect(await json(await list(fresh.apiKey))).toEqual({ data: [] });
    const a = await create(fresh.apiKey, { name: "zz_first" });
    const b = await create(fresh.apiKey, { name: "aa_second" });
    const body = await json<{ data: Action[] }>(await list(fresh.apiKey));
    expect(body.data.map((action) => action.id)).toEqual([a.id, b.id]);
  });

  it("answers 404 with the same sentence for another business's action as for an unknown id", async () => {
    const theirs = await create(other.apiKey);
    await expectError(await getOne(apiKey, theirs.id), 404, NOT_FOUND);
    await expectError(await getOne(apiKey, 99_999_999), 404, NOT_FOUND);
    await expectError(await remove(apiKey, theirs.id), 404, NOT_FOUND);
    expect((await json<{ data: Action[] }>(await list(apiKey))).data.map((a) => a.id)).not.toContain(theirs.id);
    const { secret: _, ...shown } = theirs;
    expect(await json(await getOne(other.apiKey, theirs.id))).toEqual({ ...shown, calls: [] });
    expect(await rowOf(theirs.id)).toBeDefined();
  });

  it.each(["abc", "0", "-1", "1.5", "1e3", "99999999999999999999", "%20"])(
    "answers 404 to GET and DELETE for the id %j",
    async (id) => {
      await expectError(await getOne(apiKey, id), 404, NOT_FOUND);
      await expectError(await remove(apiKey, id), 404, NOT_FOUND);
    },
  );

  it("deletes with 204 and no body; then GET, PATCH and DELETE answer 404", async () => {
    const created = await create(apiKey);
    const kept = await create(apiKey);
    const response = await remove(apiKey, created.id);
    expect(response.status).toBe(204);
    expect(await response.text()).toBe("");
    await expectError(await getOne(apiKey, created.id), 404, NOT_FOUND);
    await expectError(await patch(apiKey, created.id, { title: "x" }), 404, NOT_FOUND);
    await expectError(await remove(apiKey, created.id), 404, NOT_FOUND);
    expect(await rowOf(created.id)).toBeUndefined();
    const ids = (await json<{ data: Action[] }>(await list(apiKey))).data.map((a) => a.id);
    expect(ids).toContain(kept.id);
    expect(ids).not.toContain(created.id);
  });

  it("deletes the action's calls with it", async () => {
    const created = await create(apiKey);
    await db.insert(actionCalls).values(callRow(created.id, business.id, 0));
    expect((await remove(apiKey, created.id)).status).toBe(204);
    expect(await db.select().from(actionCalls).where(eq(actionCalls.actionId, created.id))).toEqual([]);
  });

  it("GET one shows the 10 most recent calls, newest first, as call records", async () => {
    const created = await create(apiKey);
    for (let i = 0; i < 12; i++) await db.insert(actionCalls).values(callRow(created.id, business.id, i));
    const body = await json<WithCalls>(await getOne(apiKey, created.id));
    expect(body.calls).toHaveLength(10);
    expect(body.calls.map((c) => c.arguments)).toEqual(Array.from({ length: 10 }, (_, i) => ({ n: 11 - i })));
    expect(body.calls[0]).toEqual({
      id: expect.any(Number),
      status: "success",
      arguments: { n: 11 },
      http_status: 200,
      error: null,
      duration_ms: 42,
      created_at: expect.stringMatching(TIMESTAMP),
    });
    expect(JSON.stringify(body)).not.toContain(created.secret);
  });

  it("shares actions across the business's keys: another key sees, changes and deletes them", async () => {
    const second = await createApiKey(business.id);
    const created = await create(apiKey);
    const seen = await json<WithCalls>(await getOne(second.apiKey, created.id));
    expect(seen).toMatchObject({ id: created.id, source: "api_key" });
    const listed = await json<{ data: Action[] }>(await list(second.apiKey));
    expect(listed.data.find((a) => a.id === created.id)?.source).toBe("api_key");
    expect((await patch(second.apiKey, created.id, { title: "Changed by the second key" })).status).toBe(200);
    expect((await json<WithCalls>(await getOne(apiKey, created.id))).title).toBe("Changed by the second key");
    expect((await remove(second.apiKey, created.id)).status).toBe(204);
    expect((await getOne(apiKey, created.id)).status).toBe(404);
  });

  it("keeps an action when the key that created it is revoked", async () => {
    const temporary = await createApiKey(business.id);
    const created = await create(temporary.apiKey);
    await db.update(apiKeys).set({ revokedAt: new Date().toISOString() }).where(eq(apiKeys.id, temporary.apiKeyId));
    expect((await getOne(temporary.apiKey, created.id)).status).toBe(401);
    expect((await getOne(apiKey, created.id)).status).toBe(200);
  });

  describe("authentication", async () => {
    const created = await create(apiKey);

    it.each([
      ["GET /actions", () => list(undefined)],
      ["POST /actions", () => post(undefined, validBody())],
      ["POST /actions with an invalid body", () => post(undefined, { name: "Bad" })],
      ["GET /actions/{id}", () => getOne(undefined, created.id)],
      ["PATCH /actions/{id}", () => patch(undefined, created.id, { title: "x" })],
      ["DELETE /actions/{id}", () => remove(undefined, created.id)],
    ])("%s without a key answers 401", async (_case, request) => {
      await expectMissingCredential(await request());
    });

    it("leaves the action as it was after the refused calls", async () => {
      const { secret: _, ...shown } = created;
      expect(await json(await getOne(apiKey, created.id))).toEqual({ ...shown, calls: [] });
    });

    it("answers 403 on a plan without the API, and stores nothing", async () => {
      const free = await createBusiness({ plan: "free" });
      expect((await list(free.apiKey)).status).toBe(403);
      expect((await post(free.apiKey, validBody())).status).toBe(403);
      const lapsed = await createBusiness({ plan: "pro", active: false });
      expect((await post(lapsed.apiKey, validBody())).status).toBe(403);
      expect(await rowsOfBusiness(free.business.id)).toEqual([]);
      expect(await rowsOfBusiness(lapsed.business.id)).toEqual([]);
    });
  });
});

describe("the owner's functions: switchAction and actionsForSecretary", async () => {
  const { business, apiKey } = await createBusiness();
  const other = await createBusiness();

  it("switchAction on and off is reflected in GET", async () => {
    const created = await create(apiKey);
    const on = await switchAction(db, business.id, created.id, true);
    expect(on).toMatchObject({ id: created.id, enabled: true });
    expect((await json<WithCalls>(await getOne(apiKey, created.id))).enabled).toBe(true);
    expect((await json<{ data: Action[] }>(await list(apiKey))).data.find((a) => a.id === created.id)?.enabled).toBe(
      true,
    );
    await switchAction(db, business.id, created.id, false);
    expect((await json<WithCalls>(await getOne(apiKey, created.id))).enabled).toBe(false);
  });

  it("switchAction refuses another business's action with 404 and leaves it off", async () => {
    const theirs = await create(other.apiKey);
    await expect(switchAction(db, business.id, theirs.id, true)).rejects.toMatchObject({
      status: 404,
      message: NOT_FOUND,
    });
    expect((await rowOf(theirs.id))?.enabled).toBe(false);
  });

  it("switchAction on is one guarded write: a PATCH landing between its read and its write is not switched on", async () => {
    const created = await rowOf((await create(apiKey)).id);
    if (!created) throw new Error("not stored");
    const description = "Checks free slots on a day, in every one of the business's shops.";
    let landed = false;
    /** The PATCH lands just before the switch's write runs, after the switch has read the action. */
    const patchFirst = async () => {
      if (landed) return;
      landed = true;
      expect((await patch(apiKey, created.id, { description })).status).toBe(200);
    };
    await expect(
      switchAction(writingAfter(patchFirst), business.id, created.id, true, {
        reviewed: reviewedVersion(created),
      }),
    ).rejects.toMatchObject({
      status: 409,
      message: "The action has changed since it was reviewed: review it again before switching it on.",
    });
    expect(landed).toBe(true);
    expect(await rowOf(created.id)).toMatchObject({ description, enabled: false });
  });

  it("actionsForSecretary lists only enabled actions as { name, description, parameters }, sorted by name", async () => {
    const fresh = await createBusiness();
    const zeta = await create(fresh.apiKey, { name: "zeta_lookup", description: "z".repeat(20) });
    const alpha = await create(fresh.apiKey, { name: "alpha_lookup", description: "a".repeat(20) });
    const mid = await create(fresh.apiKey, { name: "mid_lookup", parameters: undefined });
    await create(fresh.apiKey, { name: "beta_switched_off" });
    expect(await actionsForSecretary(db, fresh.business.id, "whatsapp")).toEqual([]);

    for (const action of [zeta, mid, alpha]) await switchAction(db, fresh.business.id, action.id, true);
    // Another business's enabled action never appears.
    const theirs = await create(other.apiKey, { name: "alpha_lookup" });
    await switchAction(db, other.business.id, theirs.id, true);

    const expected = [
      { name: "alpha_lookup", description: "a".repeat(20), parameters: PARAMETERS },
      { name: "mid_lookup", description: DESCRIPTION, parameters: NO_PARAMETERS },
      { name: "zeta_lookup", description: "z".repeat(20), parameters: PARAMETERS },
    ];
    for (const channel of CHAT_CHANNELS) {
      const offered = await actionsForSecretary(db, fresh.business.id, channel);
      expect(offered).toEqual(expected);
      for (const action of offered) expect(Object.keys(action).sort()).toEqual(["description", "name", "parameters"]);
    }
    expect(await actionsForSecretary(db, fresh.business.id, "phone")).toEqual([]);

    await switchAction(db, fresh.business.id, mid.id, false);
    expect((await actionsForSecretary(db, fresh.business.id, "sms")).map((a) => a.name)).toEqual([
      "alpha_lookup",
      "zeta_lookup",
    ]);
    expect(await actionsForSecretary(db, other.business.id, "sms")).toEqual([
      { name: "alpha_lookup", description: DESCRIPTION, parameters: PARAMETERS },
    ]);
  });
});

function callRow(actionId: number, businessId: string, n: number) {
  return {
    actionId,
    businessId,
    conversationId: "conv-1",
    messageId: `msg-${n}`,
    channel: "whatsapp",
    status: "success" as const,
    arguments: { n },
    httpStatus: 200,
    error: null,
    durationMs: 42,
    createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString(),
  };
}

/**
 * The database as the code under test sees it, except that `before` runs (once) before the batch that carries the
 * first UPDATE is sent (a switch is written in one batch with its event): a deterministic stand-in for a request that
 * lands between a read and the write that follows.
 */
function writingAfter(before: () => Promise<void>): typeof db {
  let landing: Promise<void> | undefined;
  const d1 = new Proxy(env.DB, {
    get(target, key) {
      if (key === "prepare") {
        return (query: string) => {
          if (/^update /.test(query)) landing ??= before();
          return target.prepare(query);
        };
      }
      if (key === "batch") {
        return async (statements: D1PreparedStatement[]) => {
          await landing;
          return target.batch(statements);
        };
      }
      const value = Reflect.get(target, key);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return database(d1);
}
