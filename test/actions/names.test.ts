import { exports } from "cloudflare:workers";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { actionCalls, actions } from "../../src/db/schema";
import { switchAction } from "../../src/domain/actions/owner-decisions";
import { isNotDataName } from "../../src/lib/validation";
import { deps } from "../helpers/dependencies";
import { createBusiness, db } from "../helpers/fixtures";
import { call, expectError, json, RUNTIME } from "../helpers/http";
import { receiverBox } from "../helpers/receiver";

/*
 * docs/architecture.md, Everywhere: action argument and parameter names are checked with Object.hasOwn; names
 * such as __proto__ or constructor are refused. Every body here that carries such a name is sent as raw JSON text,
 * so that `__proto__` arrives as the own property JSON.parse makes of it, as a partner's or runtime's JSON would.
 */

/** Every name a plain object answers without owning it, taken from Object.prototype here too, and `prototype`. */
const NOT_DATA = [...Object.getOwnPropertyNames(Object.prototype), "prototype"];
const NOT_DATA_SENTENCE = "a name every object inherits, which a parameter may not have";
const DESCRIPTION = "Looks up free tables for a day and party size, for customers asking.";
const DATE = { type: "string", description: "Day, YYYY-MM-DD" };

let counter = 0;
const uniqueName = () => `names_${(counter++).toString(36)}`;

/** A POST /actions body as JSON text, with `properties` spliced in as text so that any key survives as written. */
const actionText = (propertiesText: string, required: string[] = []) =>
  `{"name":"${uniqueName()}","title":"Check tables","description":"${DESCRIPTION}","url":"https://partner.example/a",` +
  `"parameters":{"type":"object","properties":${propertiesText},"required":${JSON.stringify(required)}}}`;
const withParameter = (name: string) => `{"date":${JSON.stringify(DATE)},"${name}":${JSON.stringify(DATE)}}`;

const post = (apiKey: string, text: string) => call("/api/v1/actions", { key: apiKey, method: "POST", body: text });
const patch = (apiKey: string, id: number, text: string) =>
  call(`/api/v1/actions/${id}`, { key: apiKey, method: "PATCH", body: text });
const actionsOf = (businessId: string) => db.select().from(actions).where(eq(actions.businessId, businessId));

describe("isNotDataName", () => {
  it("contains the names of Object.prototype that make it a JavaScript object, and prototype", () => {
    for (const name of ["__proto__", "constructor", "prototype", "toString", "valueOf", "hasOwnProperty"]) {
      expect(NOT_DATA).toContain(name);
    }
    for (const name of ["isPrototypeOf", "propertyIsEnumerable", "toLocaleString"]) expect(NOT_DATA).toContain(name);
    for (const name of ["__defineGetter__", "__defineSetter__", "__lookupGetter__", "__lookupSetter__"]) {
      expect(NOT_DATA).toContain(name);
    }
  });

  it.each(NOT_DATA)("is true for %s", (name) => {
    expect(isNotDataName(name)).toBe(true);
  });

  it.each(["date", "Constructor", "proto", "prototypes", "to_string", "value_of", "toString2", "length", "name", ""])(
    "is false for %j, a name of data",
    (name) => {
      expect(isNotDataName(name)).toBe(false);
    },
  );
});

describe("parameter names at registration (POST and PATCH /api/v1/actions)", async () => {
  const { business, apiKey } = await createBusiness();
  const existing = await json<{ id: number }>(await post(apiKey, actionText(withParameter("party"))));

  it("sends the properties as raw text: __proto__ is an own key of what the Worker parses", () => {
    expect(Object.keys(JSON.parse(withParameter("__proto__")))).toEqual(["date", "__proto__"]);
  });

  it.each(NOT_DATA)("POST refuses a parameter named %s with 400 naming it, and stores nothing", async (name) => {
    const before = (await actionsOf(business.id)).length;
    await expectError(
      await post(apiKey, actionText(withParameter(name))),
      400,
      `The field "parameters.properties.${name}" is ${NOT_DATA_SENTENCE}.`,
    );
    expect(await actionsOf(business.id)).toHaveLength(before);
  });

  it.each(NOT_DATA)("PATCH refuses a parameter named %s with 400 naming it, and changes nothing", async (name) => {
    const before = await db.select().from(actions).where(eq(actions.id, existing.id)).get();
    const text = `{"parameters":{"type":"object","properties":${withParameter(name)}}}`;
    await expectError(
      await patch(apiKey, existing.id, text),
      400,
      `The field "parameters.properties.${name}" is ${NOT_DATA_SENTENCE}.`,
    );
    expect(await db.select().from(actions).where(eq(actions.id, existing.id)).get()).toEqual(before);
  });

  it("refuses __proto__ as the only parameter too: it is not dropped and the action stored without it", async () => {
    const before = (await actionsOf(business.id)).length;
    await expectError(
      await post(apiKey, actionText(`{"__proto__":${JSON.stringify(DATE)}}`)),
      400,
      `The field "parameters.properties.__proto__" is ${NOT_DATA_SENTENCE}.`,
    );
    expect(await actionsOf(business.id)).toHaveLength(before);
  });

  it.each(NOT_DATA)("refuses %s in required, naming the entry", async (name) => {
    await expectError(
      await post(apiKey, actionText(withParameter("party"), ["date", name])),
      400,
      `The field "parameters.required[1]" names "${name}", ${NOT_DATA_SENTENCE}.`,
    );
  });

  it("refuses a __proto__ key inside a parameter's definition, naming it, rather than dropping it", async () => {
    const text = actionText(`{"date":{"type":"string","description":"Day","__proto__":{"enum":["2026-12-24"]}}}`);
    await expectError(
      await post(apiKey, text),
      400,
      `The field "parameters.properties.date.__proto__" is ${NOT_DATA_SENTENCE}.`,
    );
  });

  it("accepts names of data that only resemble them", async () => {
    const names = ["Constructor", "proto", "prototypes", "value_of", "to_string"];
    const properties = `{${names.map((name) => `"${name}":${JSON.stringify(DATE)}`).join(",")}}`;
    const response = await post(apiKey, actionText(properties, ["Constructor"]));
    await expect(response).toHaveStatus(201);
    expect(Object.keys((await json<{ parameters: { properties: object } }>(response)).parameters.properties)).toEqual(
      names,
    );
  });
});

describe("argument names at call time (POST /internal/v1/businesses/{id}/actions/{name}/call, and RPC)", async () => {
  const box = receiverBox("not-data");
  const { business, apiKey } = await createBusiness();
  const created = await post(
    apiKey,
    `{"name":"tables","title":"Check tables","description":"${DESCRIPTION}","url":"${box.url("/ok")}",` +
      `"parameters":{"type":"object","properties":{"date":${JSON.stringify(DATE)}},"required":["date"]}}`,
  );
  await expect(created).toHaveStatus(201);
  const action = await json<{ id: number; name: string }>(created);
  await switchAction(deps, business.id, action.id, true);

  let messages = 0;
  const callText = (argumentsText: string) =>
    `{"conversation_id":"conv-names","message_id":"msg-${++messages}","channel":"whatsapp","arguments":${argumentsText}}`;
  const callIt = (text: string) =>
    call(`/internal/v1/businesses/${business.id}/actions/${action.name}/call`, {
      method: "POST",
      headers: RUNTIME,
      body: text,
    });
  const callsOf = () => db.select().from(actionCalls).where(eq(actionCalls.actionId, action.id));
  const sent = async () => (await box.recorded()).length;

  it.each(NOT_DATA)("records an argument named %s as rejected, naming it, and sends nothing", async (name) => {
    const sentBefore = await sent();
    const response = await callIt(callText(`{"date":"2026-12-24","${name}":"x"}`));
    await expect(response).toHaveStatus(200);
    const { call: recorded } = await json<{ call: { id: number; status: string; error: string; arguments: object } }>(
      response,
    );
    expect(recorded).toMatchObject({
      status: "rejected",
      error: `The arguments do not fit the parameters: "${name}" is not a parameter of this action.`,
    });
    // Recorded as sent, the name kept as data.
    expect(Object.entries(recorded.arguments)).toEqual([
      ["date", "2026-12-24"],
      [name, "x"],
    ]);
    const row = (await callsOf()).find((one) => one.id === recorded.id);
    expect(Object.keys(row?.arguments ?? {})).toEqual(["date", name]);
    expect(await sent()).toBe(sentBefore);
  });

  it("shows the rejected call's arguments in the action's history, __proto__ included", async () => {
    await callIt(callText('{"date":"2026-12-24","__proto__":"x"}'));
    const text = await (await call(`/api/v1/actions/${action.id}`, { key: apiKey })).text();
    expect(text).toContain('"arguments":{"date":"2026-12-24","__proto__":"x"}');
  });

  it("takes no argument from an object under __proto__: 422 naming the missing one, nothing sent or recorded", async () => {
    const [callsBefore, sentBefore] = [(await callsOf()).length, await sent()];
    const response = await callIt(callText('{"__proto__":{"date":"2026-12-24"}}'));
    await expectError(
      response,
      422,
      'The required parameter "date" is missing: ask the customer for it instead of calling.',
    );
    expect(await callsOf()).toHaveLength(callsBefore);
    expect(await sent()).toBe(sentBefore);
  });

  it("is the same through RPC", async () => {
    const sentBefore = await sent();
    const body = JSON.parse(callText('{"date":"2026-12-24","__proto__":"x"}'));
    const result = await exports.RuntimeApi.callAction(business.id, action.name, body);
    expect(result).toMatchObject({
      ok: true,
      value: {
        call: {
          status: "rejected",
          error: 'The arguments do not fit the parameters: "__proto__" is not a parameter of this action.',
        },
      },
    });
    expect(await sent()).toBe(sentBefore);
  });

  it("still sends a call whose every argument is a parameter", async () => {
    const sentBefore = await sent();
    const response = await callIt(callText('{"date":"2026-12-24"}'));
    expect((await json<{ call: { status: string } }>(response)).call.status).toBe("success");
    expect(await sent()).toBe(sentBefore + 1);
  });
});
