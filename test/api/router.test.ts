import { describe, expect, it } from "vitest";
import { app } from "../../src/app";
import { call } from "../helpers/http";

// Every request of the Worker is routed first: Hono's RegExpRouter matches a path with one regular expression, where
// its fallback, the TrieRouter, walks a tree per request and cost the report route about a millisecond of CPU
// (docs/performance.md). It takes only routes it can tell apart: no static path beside a parameter at the same place.
describe("the Worker's router", () => {
  it("is Hono's RegExpRouter: every route of the app fits it", async () => {
    await expect(await call("/docs/guides/getting-started")).toHaveStatus(200);
    const router = app.router as unknown as { activeRouter: { name: string } };
    expect(router.activeRouter.name).toBe("RegExpRouter");
  });

  it("still serves the guides' stylesheet beside the guides, and no guide under another name", async () => {
    const stylesheet = await call("/docs/guides/guides.css");
    await expect(stylesheet).toHaveStatus(200);
    expect(stylesheet.headers.get("Content-Type")).toMatch(/^text\/css/);
    await expect(await call("/docs/guides/index")).toHaveStatus(404);
    await expect(await call("/docs/guides/Getting-Started")).toHaveStatus(404);
  });
});
