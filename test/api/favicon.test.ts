import { describe, expect, it } from "vitest";
import { call } from "../helpers/http";

// Every page names the service's icon (src/pages/page-shell.tsx, FAVICON), so that no browser asks for a file the
// service does not have (docs/architecture.md, Pages).
describe("the service's icon", () => {
  it("is served from this origin as SVG, and /favicon.ico leads to it", async () => {
    const icon = await call("/favicon.svg");
    await expect(icon).toHaveStatus(200);
    expect(icon.headers.get("Content-Type")).toContain("image/svg+xml");
    expect(await icon.text()).toMatch(/^<svg /);
    const legacy = await call("/favicon.ico");
    await expect(legacy).toHaveStatus(301);
    expect(legacy.headers.get("Location")).toBe("/favicon.svg");
  });

  it.each(["/dashboard/sign-in", "/docs", "/docs/guides", "/docs/guides/webhooks", "/"])(
    "is named by %s",
    async (path) => {
      const page = await call(path);
      await expect(page).toHaveStatus(200);
      expect(await page.text()).toMatch(/<link rel="icon" href="\/favicon\.svg" type="image\/svg\+xml"/);
    },
  );
});
