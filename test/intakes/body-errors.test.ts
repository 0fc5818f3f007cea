import { describe, expect, it } from "vitest";
import { createBusiness } from "../helpers/fixtures";
import { call, expectErrorBody, json } from "../helpers/http";
import { createIntake, intakeBody } from "../helpers/intakes";
import { expectInvalid } from "../helpers/intakes-api";

/*
 * docs/guides/intakes.md, Registering an intake: intake errors are `{ error, field }`, so every 400 of `/intakes`
 * carries `field`, null when the body as a whole is at fault, beside the API's `code` and `request_id`.
 */
describe("the 400s of /intakes for a body at fault as a whole", async () => {
  const { apiKey } = await createBusiness();
  const intake = await createIntake(apiKey);
  const routes = [
    ["POST", "/api/v1/intakes"],
    ["PATCH", `/api/v1/intakes/${intake.id}`],
  ] as const;
  const send = (method: string, path: string, body: string, headers: Record<string, string> = {}) =>
    call(path, { key: apiKey, method, body, headers: { "Content-Type": "application/json", ...headers } });

  it.each(routes)("%s %s: a body that is not an object has field null", async (method, path) => {
    for (const body of ["[]", '"intake"', "null", "42"]) {
      await expectInvalid(await send(method, path, body), null, /^The request body must be an object\.$/);
    }
  });

  it.each(routes)("%s %s: a body that is not valid JSON has field null", async (method, path) => {
    for (const body of ["{not json", "", '{"title": "Quote"']) {
      await expectInvalid(
        await send(method, path, body),
        null,
        /^The request body is not valid JSON\.$/,
        "invalid_json",
      );
    }
  });

  it.each(routes)("%s %s: a body not sent as application/json has field null", async (method, path) => {
    const body = JSON.stringify(intakeBody());
    for (const type of ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"]) {
      const response = await send(method, path, body, { "Content-Type": type });
      await expectInvalid(
        response,
        null,
        /^The request body must be sent as application\/json\.$/,
        "invalid_content_type",
      );
    }
  });

  it("keeps the member's path in field for a member at fault, and field out of other routes' 400s", async () => {
    await expectInvalid(await send("POST", "/api/v1/intakes", JSON.stringify(intakeBody({ title: "" }))), "title");
    const webhooks = await send("POST", "/api/v1/webhooks", "[]");
    const body = expectErrorBody(webhooks, await json(webhooks));
    await expect(webhooks).toHaveStatus(400);
    expect(body).not.toHaveProperty("field");
  });
});
