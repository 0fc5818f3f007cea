import { describe, expect, it } from "vitest";
import {
  type Created,
  create,
  PRIVATE,
  post,
  postInProduction,
  remove,
  rowsOfBusiness,
  validBody,
} from "../helpers/actions-api";
import { createApiKey, createBusiness } from "../helpers/fixtures";
import { expectError, json } from "../helpers/http";

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
      await expect(response).toHaveStatus(201);
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
      await expect(await post(other.apiKey, validBody({ name: "lookup_order" }))).toHaveStatus(201);
    });

    it("frees the name when the action is deleted", async () => {
      const created = await create(apiKey, { name: "reused_name" });
      await expect(await post(apiKey, validBody({ name: "reused_name" }))).toHaveStatus(400);
      await expect(await remove(apiKey, created.id)).toHaveStatus(204);
      await expect(await post(apiKey, validBody({ name: "reused_name" }))).toHaveStatus(201);
    });
  });

  describe("title: 1 to 80 characters", async () => {
    const { apiKey } = await createBusiness();

    it("accepts 80 characters, 80 multi-byte characters and 1 character", async () => {
      for (const title of ["t".repeat(80), "é".repeat(80), "😀".repeat(80), "t"]) {
        const response = await post(apiKey, validBody({ title }));
        await expect(response).toHaveStatus(201);
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
      await expect(response).toHaveStatus(201);
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
      await expect(response).toHaveStatus(201);
      expect((await json<Created>(response)).url).toBe(url);
    });

    it("accepts a public host name with a port and a query", async () => {
      await expect(
        await post(apiKey, validBody({ url: "https://partner.example:8443/actions?tenant=7" })),
      ).toHaveStatus(201);
    });

    it.each([["https://93.184.216.34/x"], ["https://[2606:4700:4700::1111]/x"]])(
      "refuses the public IP literal %s: production cannot fetch it",
      async (url) => {
        await expectError(await post(apiKey, validBody({ url })), 400, /must name its host, not an IP address/, {
          param: "url",
        });
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
      await expect(response).toHaveStatus(201);
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
        'The field "parameters.properties.filter.properties" nests parameters, and parameters are flat.',
      ],
      [
        "nesting with items inside a parameter",
        { type: "object", properties: { dates: { ...parameter(), items: parameter() } } },
        'The field "parameters.properties.dates.items" nests parameters, and parameters are flat.',
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
      await expectError(await post(apiKey, body), 400, "The request body must be an object.", {
        code: "invalid_request",
        param: undefined,
      });
    });
  });
});
