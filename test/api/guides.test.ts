import { describe, expect, it } from "vitest";
import { GUIDES, renderGuides } from "../../scripts/guides";
import { ERROR_CODES } from "../../src/lib/error-codes";
import { otherOriginSources } from "../helpers/csp";
import { call } from "../helpers/http";

/*
 * The partner guides are static pages that `npm run guides` renders from docs/guides/*.md into assets/ (committed),
 * served through the Worker with the pages' headers (docs/architecture.md, Pages). The pages served must be exactly
 * what the sources render to today, and link only to pages of this service that exist.
 */

declare global {
  interface ImportMeta {
    /** Vite's glob import: every matching file's text, by path. */
    glob(pattern: string, options: { query: "?raw"; import: "default"; eager: true }): Record<string, string>;
  }
}

const sources = Object.fromEntries(
  Object.entries(import.meta.glob("../../docs/guides/*.md", { query: "?raw", import: "default", eager: true })).map(
    ([path, text]) => [/([^/]+)\.md$/.exec(path)?.[1] ?? path, text],
  ),
);
const committed = Object.keys(
  import.meta.glob("../../assets/docs/guides/*", { query: "?raw", import: "default", eager: true }),
).map((path) => path.replace("../../assets/", ""));
const rendered = renderGuides(sources, ERROR_CODES);

/** Where the Worker serves each rendered file. */
const servedAt = (file: string) =>
  file === "index.html" ? "/" : `/${file.replace(/\/index\.html$/, "").replace(/\.html$/, "")}`;
const pages = Object.keys(rendered);

describe("the partner guides", () => {
  it("renders every guide of docs/guides, and assets/docs/guides holds the rendered pages and the stylesheet", () => {
    expect(Object.keys(sources).sort()).toEqual([...GUIDES].sort());
    const pagesThere = Object.keys(rendered).filter((file) => file.startsWith("docs/guides/"));
    expect(committed.sort(), "run `npm run guides` and commit assets/").toEqual(
      [...pagesThere, "docs/guides/guides.css"].sort(),
    );
  });

  it.each(pages)("serves %s exactly as the sources render it today", async (file) => {
    const response = await call(servedAt(file));
    await expect(response).toHaveStatus(200);
    expect(await response.text(), "run `npm run guides` and commit assets/").toBe(rendered[file]);
  });

  it.each(pages)("serves %s as a page: text/html, the pages' headers, no script, no other origin", async (file) => {
    const response = await call(servedAt(file));
    expect(response.headers.get("Content-Type")).toBe("text/html; charset=utf-8");
    const csp = response.headers.get("Content-Security-Policy") ?? "";
    expect(csp).toMatch(/^default-src 'none'; style-src 'self'; /);
    expect(csp).toContain("frame-ancestors 'none'");
    expect(otherOriginSources(csp)).toEqual([]);
    expect(response.headers.get("X-Frame-Options")).toBe("DENY");
    expect(response.headers.get("X-Content-Type-Options")).toBe("nosniff");
    expect(response.headers.get("Referrer-Policy")).toBe("no-referrer");
    expect(response.headers.get("Cache-Control")).toBe("no-store");
    expect(rendered[file]).not.toMatch(/<script|<iframe|<img|style="/i);
  });

  it("serves the stylesheet as CSS", async () => {
    const response = await call("/docs/guides/guides.css");
    await expect(response).toHaveStatus(200);
    expect(response.headers.get("Content-Type")).toMatch(/^text\/css/);
  });

  it.each(["/docs/guides/nope", "/docs/guides/index", "/docs/guides/Webhooks", "/docs/guides/webhooks.html"])(
    "answers %s with a 404",
    async (path) => {
      const response = await call(path);
      await expect(response).toHaveStatus(404);
      expect(await response.json()).toMatchObject({ code: "route_not_found" });
    },
  );

  it.each(pages)("links from %s only to pages of this service that exist", async (file) => {
    const html = rendered[file] ?? "";
    const hrefs = [...html.matchAll(/\shref="([^"]*)"/g)].map((match) => match[1] ?? "");
    expect(hrefs.length).toBeGreaterThan(0);
    for (const href of hrefs) {
      expect(href, `${file} links to ${href}`).toMatch(/^(\/(?!\/)|#)/);
      const [path = "", fragment] = href.split("#");
      const target = path === "" ? servedAt(file) : path;
      let response = await call(target);
      // A page that sends the browser on (the dashboard to its sign-in) must lead to a page of this service too.
      for (let hops = 0; response.status === 303 && hops < 3; hops++) {
        const location = response.headers.get("Location") ?? "";
        expect(location, `${file} links to ${href}, which redirects`).toMatch(/^\/(?!\/)/);
        response = await call(location);
      }
      await expect(response, `${file} links to ${href}`).toHaveStatus(200);
      if (fragment) expect(await response.text(), `${file} links to ${href}`).toContain(` id="${fragment}"`);
    }
  });

  it("is linked from the reference page, whose description leads to the index and to Getting started", async () => {
    const document = (await (await call("/api/v1/openapi.json")).json()) as { info: { description: string } };
    expect(document.info.description).toContain("](/docs/guides)");
    expect(document.info.description).toContain("](/docs/guides/getting-started)");
  });
});
