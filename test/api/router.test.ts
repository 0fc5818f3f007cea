import { describe, expect, it } from "vitest";
import { app } from "../../src/app";
import { call } from "../helpers/http";

// Every request of the Worker is routed first: Hono's RegExpRouter matches a path with one regular expression, where
// its fallback, the TrieRouter, walks a tree per request and cost the report route about a millisecond of CPU
// (docs/performance.md). It takes only routes it can tell apart: no static path beside a parameter at the same place.
describe("the Worker's router", () => {
  it("is Hono's RegExpRouter: every route of the app fits it", async () => {
    expect((await call("/docs/guides/getting-started")).status).toBe(200);
    const router = app.router as unknown as { activeRouter: { name: string } };
    expect(router.activeRouter.name).toBe("RegExpRouter");
  });

  it("still serves the guides' stylesheet beside the guides, and no guide under another name", async () => {
    const stylesheet = await call("/docs/guides/guides.css");
    expect(stylesheet.status).toBe(200);
    expect(stylesheet.headers.get("Content-Type")).toMatch(/^text\/css/);
    expect((await call("/docs/guides/index")).status).toBe(404);
    expect((await call("/docs/guides/Getting-Started")).status).toBe(404);
  });
});
