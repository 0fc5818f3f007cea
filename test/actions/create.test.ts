import { describe, expect, it } from "vitest";
import {
  ACTION_FIELDS,
  ACTION_URL,
  type Action,
  type Created,
  create,
  DESCRIPTION,
  getOne,
  LIMIT_SENTENCE,
  list,
  NO_PARAMETERS,
  PARAMETERS,
  patch,
  post,
  remove,
  rowOf,
  rowsOfBusiness,
  SECRET,
  TIMESTAMP,
  validBody,
  type WithCalls,
} from "../helpers/actions-api";
import { createApiKey, createBusiness } from "../helpers/fixtures";
import { expectError, json } from "../helpers/http";

describe("POST /api/v1/actions", async () => {
  const { business, apiKey } = await createBusiness();

  it("answers 201 with exactly the action's fields and its secret, switched off, from an API key", async () => {
    const before = new Date().toISOString();
    const response = await post(apiKey, validBody({ name: "check_slots" }));
    await expect(response).toHaveStatus(201);
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
      mcpServerId: null,
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
    await expect(listed).toHaveStatus(200);
    const listBody = await json<{ data: Action[] }>(listed);
    expect(Object.keys(listBody)).toEqual(["data"]);
    const shown = listBody.data.find((action) => action.id === created.id);
    const { secret, ...withoutSecret } = created;
    expect(shown).toEqual(withoutSecret);
    for (const action of listBody.data) expect(Object.keys(action).sort()).toEqual(ACTION_FIELDS);

    const one = await getOne(apiKey, created.id);
    await expect(one).toHaveStatus(200);
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
    await expect(response).toHaveStatus(201);
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
    await expect(response).toHaveStatus(201);
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

describe("parameters that ask for contact details (docs/guides/connected-actions.md, Registering an action: an intake may, an action not)", async () => {
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
    await expect(response).toHaveStatus(201);
    expect((await json<Created>(response)).parameters).toEqual(parameters);
  });
});

describe("at most 10 actions per business (docs/guides/connected-actions.md, Registering an action)", () => {
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
    await expect(await remove(apiKey, first.id)).toHaveStatus(204);
    await expect(await post(apiKey, validBody())).toHaveStatus(201);
    await expect(await post(apiKey, validBody())).toHaveStatus(403);
  });

  it("counts every key of the business together, and only that business", async () => {
    const { business, apiKey } = await createBusiness();
    const second = await createApiKey(business.id);
    for (let i = 0; i < 5; i++) await create(apiKey);
    for (let i = 0; i < 5; i++) await create(second.apiKey);
    await expectError(await post(apiKey, validBody()), 403, LIMIT_SENTENCE);
    await expectError(await post(second.apiKey, validBody()), 403, LIMIT_SENTENCE);
    const other = await createBusiness();
    await expect(await post(other.apiKey, validBody())).toHaveStatus(201);
  });

  it("14 concurrent creates on an empty business: exactly 10 × 201, 4 × 403 and 10 rows stored", async () => {
    const { business, apiKey } = await createBusiness();
    const responses = await Promise.all(Array.from({ length: 14 }, () => post(apiKey, validBody())));
    const statuses = responses.map((response) => response.status);
    expect(statuses.filter((status) => status === 201)).toHaveLength(10);
    expect(statuses.filter((status) => status === 403)).toHaveLength(4);
    const bodies = await Promise.all(responses.map((response) => json<Created>(response)));
    const createdIds = bodies.filter((_, i) => statuses[i] === 201).map((body) => body.id);
    for (const [i, response] of responses.entries()) {
      if (statuses[i] !== 403) continue;
      expect(bodies[i]).toEqual({
        error: LIMIT_SENTENCE,
        code: "limit_reached",
        request_id: response.headers.get("X-Request-Id"),
      });
    }

    const rows = await rowsOfBusiness(business.id);
    expect(rows).toHaveLength(10);
    expect(rows.map((row) => row.id).sort((a, b) => a - b)).toEqual([...createdIds].sort((a, b) => a - b));
  });
});
