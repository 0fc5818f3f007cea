import { env } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { PAGE_SERVER_ERROR } from "../../src/middleware/error-responses";
import { page, signedIn } from "../helpers/dashboard";
import { shardD1 } from "../helpers/fixtures";
import { call } from "../helpers/http";
import {
  authorizeQuery,
  browse,
  CookieJar,
  createOwnerBusiness,
  csrfTokenOf,
  registerClient,
  signIn,
  validAuthorizationParams,
} from "../helpers/oauth";
import { expectServerErrors } from "../helpers/server-errors";
import { subscribe } from "../helpers/webhooks";

// An unexpected error (a throw that is not an ApiError) on an owner's page answers the surface's own HTML page, status
// 500, with the page headers and nothing of the error; the API's JSON is for the API. The failures are real: a stored
// row whose JSON column is not JSON, written straight into D1, makes the page's own read throw.

const logged = () => vi.spyOn(console, "error").mockImplementation(() => undefined);

afterEach(() => {
  vi.restoreAllMocks();
});

/** The 500 page: HTML in the page shell, the page headers, one log line with the request id, and no detail. */
async function expectServerErrorPage(response: Response, log: ReturnType<typeof logged>, title: string) {
  await expect(response).toHaveStatus(500);
  expect(response.headers.get("Content-Type")).toMatch(/^text\/html/);
  expect(response.headers.get("Content-Security-Policy")).toMatch(/^default-src 'none'; /);
  expect(response.headers.get("X-Frame-Options")).toBe("DENY");
  expect(response.headers.get("Cache-Control")).toBe("no-store");
  const html = await response.text();
  expect(html).toMatch(/^<!doctype html>/);
  expect(html).toContain(`<title>${title}</title>`);
  expect(html).toContain(PAGE_SERVER_ERROR);
  expect(html).not.toMatch(/SyntaxError|not json|JSON|stack/i);
  expect(html).toContain(`<h1>${title.replace(" · Secretary", "")}</h1>`);
  expect(log).toHaveBeenCalledTimes(1);
  expect(JSON.parse(String(log.mock.calls[0]?.[0]))).toMatchObject({
    level: "error",
    requestId: response.headers.get("X-Request-Id"),
    error: "SyntaxError",
  });
  return html;
}

describe("the dashboard", async () => {
  const owner = await createOwnerBusiness({ name: "Broken Row Studio" });
  const jar = await signedIn(owner);
  const endpoint = await subscribe(owner.apiKey, "https://partner.example/broken", ["lead.created"]);

  it("answers its 500 page when a page's handler throws", async () => {
    await expect(await page(jar, "/dashboard/webhooks")).toHaveStatus(200);
    await shardD1.prepare("UPDATE webhook_endpoints SET events = 'not json' WHERE id = ?").bind(endpoint.id).run();
    expectServerErrors();
    const log = logged();
    const html = await expectServerErrorPage(
      await browse(jar, "/dashboard/webhooks"),
      log,
      "That did not work · Secretary",
    );
    // The dashboard's shell: the owner's navigation, and a way back.
    expect(html).toContain("Broken Row Studio");
    expect(html).toContain('href="/dashboard"');
  });
});

describe("the consent page", async () => {
  const owner = await createOwnerBusiness({ name: "Broken Client Studio" });

  async function brokenClient() {
    const client = await registerClient({ client_name: "Broken App" });
    const query = authorizeQuery((await validAuthorizationParams(client)).params);
    const breakIt = () =>
      env.DB.prepare("UPDATE oauth_clients SET redirect_uris = 'not json' WHERE id = ?").bind(client.client_id).run();
    return { query, breakIt };
  }

  it("answers its 500 page when the page's handler throws, on the GET", async () => {
    const { query, breakIt } = await brokenClient();
    await breakIt();
    expectServerErrors();
    const log = logged();
    const html = await expectServerErrorPage(await call(`/oauth/authorize?${query}`), log, "Something failed");
    // A way to start again: the same request.
    expect(html).toContain(`href="/oauth/authorize?${query.replaceAll("&", "&amp;")}"`);
  });

  it("and on the owner's answer, signed in", async () => {
    const { query, breakIt } = await brokenClient();
    const jar = new CookieJar();
    const csrf = csrfTokenOf(await (await signIn(jar, query, owner.owner)).text());
    await breakIt();
    expectServerErrors();
    const log = logged();
    const answer = await browse(jar, `/oauth/authorize?${query}`, { form: { csrf_token: csrf, decision: "approve" } });
    expect(answer.headers.get("Location")).toBeNull();
    await expectServerErrorPage(answer, log, "Something failed");
  });
});

it("leaves the API's unexpected errors as JSON", async () => {
  const owner = await createOwnerBusiness();
  const endpoint = await subscribe(owner.apiKey, "https://partner.example/broken-api", ["lead.created"]);
  await shardD1.prepare("UPDATE webhook_endpoints SET events = 'not json' WHERE id = ?").bind(endpoint.id).run();
  expectServerErrors();
  logged();
  const response = await call("/api/v1/webhooks", { key: owner.apiKey });
  await expect(response).toHaveStatus(500);
  expect(response.headers.get("Content-Type")).toMatch(/^application\/json/);
  expect(await response.json()).toEqual({
    error: "Something failed on our side; retry with a short backoff.",
    code: "internal_error",
    request_id: response.headers.get("X-Request-Id"),
  });
});
