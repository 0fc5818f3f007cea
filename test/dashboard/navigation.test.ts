import { describe, expect, it } from "vitest";
import { BASE } from "../helpers/http";
import { browse, CookieJar, createOwnerBusiness, csrfTokenOf } from "../helpers/oauth";

// docs/decisions.md, The owner's dashboard: Integration holds API keys, Connected apps and Webhooks.
describe("the dashboard's navigation", async () => {
  const shop = await createOwnerBusiness();
  const jar = new CookieJar();
  const page = await browse(jar, "/dashboard/sign-in");
  await browse(jar, "/dashboard/sign-in", {
    form: { csrf_token: csrfTokenOf(await page.text()), email: shop.owner.email, password: shop.owner.password },
    headers: { Origin: BASE },
  });

  it("groups API keys, Connected apps and Webhooks under Integration, on every page", async () => {
    for (const path of ["/dashboard", "/dashboard/keys", "/dashboard/actions", "/dashboard/webhooks"]) {
      const html = await (await browse(jar, path)).text();
      const group = /data-testid="nav-integration">([\s\S]*?)<\/span>\s*<form/.exec(html)?.[1] ?? "";
      // A group named for assistive technology by its visible name.
      expect(html).toContain('role="group" aria-labelledby="nav-integration-name"');
      expect(group).toMatch(/id="nav-integration-name"[^>]*>\s*Integration\s*</);
      const links = [...group.matchAll(/<a href="([^"]+)">([^<]+)<\/a>/g)].map((m) => [m[1], m[2]]);
      expect(links).toEqual([
        ["/dashboard/keys", "API keys"],
        ["/dashboard/apps", "Connected apps"],
        ["/dashboard/webhooks", "Webhooks"],
      ]);
      const outside = html.replace(group, "");
      expect(outside).not.toContain('<a href="/dashboard/keys">');
      expect(outside).toContain('<a href="/dashboard/actions">Actions</a>');
    }
  });
});
