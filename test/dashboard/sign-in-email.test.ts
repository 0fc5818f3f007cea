import { describe, expect, it } from "vitest";
import { post } from "../helpers/dashboard";
import {
  authorizeQuery,
  browse,
  CookieJar,
  createOwnerBusiness,
  csrfTokenOf,
  registerClient,
  validAuthorizationParams,
} from "../helpers/oauth";

// docs/decisions.md, The owner's dashboard: a failed sign-in draws the form again with the email that was sent
// (escaped), never with the password, on the dashboard and on the consent page alike.

const PASSWORD = 'Hunter2-Zq9 <pw> "Xy7"';
const EMAIL = `o'brien+"<b>x</b>"@example.com`;
const ESCAPED = "o&#39;brien+&quot;&lt;b&gt;x&lt;/b&gt;&quot;@example.com";

function expectKeptEmail(html: string) {
  const input = /<input id="email"[^>]*>/.exec(html)?.[0] ?? "";
  expect(input).toContain(`value="${ESCAPED}"`);
  expect(html).not.toContain("<b>x</b>");
  expect(/<input id="password"[^>]*>/.exec(html)?.[0]).not.toContain("value=");
  expect(html).not.toContain("Hunter2-Zq9");
}

describe("a failed sign-in keeps the email", async () => {
  const mine = await createOwnerBusiness();

  it("on the dashboard", async () => {
    const jar = new CookieJar();
    const csrf = csrfTokenOf(await (await browse(jar, "/dashboard/sign-in")).text());
    for (const email of [EMAIL, mine.owner.email]) {
      const failed = await post(jar, "/dashboard/sign-in", { csrf_token: csrf, email, password: PASSWORD });
      await expect(failed).toHaveStatus(401);
      const html = await failed.text();
      if (email === EMAIL) expectKeptEmail(html);
      else expect(html).toContain(`value="${mine.owner.email}"`);
    }
  });

  it("on the consent page", async () => {
    const client = await registerClient();
    const query = authorizeQuery((await validAuthorizationParams(client)).params);
    const jar = new CookieJar();
    const csrf = csrfTokenOf(await (await browse(jar, `/oauth/authorize?${query}`)).text());
    const failed = await browse(jar, `/oauth/authorize/sign-in?${query}`, {
      form: { csrf_token: csrf, email: EMAIL, password: PASSWORD },
    });
    await expect(failed).toHaveStatus(401);
    expectKeptEmail(await failed.text());
  });
});
