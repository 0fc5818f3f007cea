import { describe, expect, it } from "vitest";

/*
 * docs/guides: every curl command and SDK client of a guide sends to `$API_BASE`, which the guide's "Where to send
 * requests" sets, above its first request, to production or to a local `npm start`; and the packages are installed
 * by their published names.
 */

const sources = Object.entries(
  import.meta.glob("../../docs/guides/*.md", { query: "?raw", import: "default", eager: true }),
).map(([path, text]) => [/([^/]+)\.md$/.exec(path)?.[1] ?? path, text] as const);

const blocksOf = (markdown: string) =>
  [...markdown.matchAll(/```(\w*)\n([\s\S]*?)```/g)].map(([whole, language = "", code = ""]) => ({
    language,
    code,
    at: markdown.indexOf(whole),
  }));

/** A block that sends a request: a curl command, a `fetch` or the SDK's client. */
const sends = (code: string) => /\bcurl |\bfetch\(|createPartnerClient\(|oauth\.discoveryRequest/.test(code);

describe("the guides' requests", () => {
  const withRequests = sources.filter(([, text]) => blocksOf(text).some(({ code }) => sends(code)));

  it("are in the guides that show requests", () => {
    expect(withRequests.map(([name]) => name).sort()).toEqual(
      expect.arrayContaining(["getting-started", "sandbox", "webhooks", "connected-actions", "intakes", "oauth"]),
    );
  });

  it.each(withRequests)("%s: says where to send requests above its first one, and sends every one there", (_, text) => {
    const note = text.indexOf("\n## Where to send requests\n");
    const first = blocksOf(text).find(({ code }) => sends(code));
    expect(note).toBeGreaterThan(0);
    expect(note).toBeLessThan(first?.at ?? 0);
    expect(text).toContain("export API_BASE=https://partners.secretary.example");
    expect(text).toContain("# export API_BASE=http://localhost:8787");
    for (const { language, code } of blocksOf(text)) {
      if (language === "json") continue;
      expect(code, code).not.toMatch(/https:\/\/partners\.secretary\.example\/api/);
      for (const [curl] of code.matchAll(/\bcurl [^\n]*/g)) expect(curl).toMatch(/ "?\$API_BASE\/api\//);
      for (const [client] of code.matchAll(/createPartnerClient\([^;]*\)/g)) {
        expect(client).toMatch(/baseUrl: `\$\{process\.env\.API_BASE\}\/api\/v1`/);
      }
    }
  });

  it.each(sources)("%s: installs the SDK and the CLI by their package names", (_, text) => {
    for (const [install] of text.matchAll(/npm install [^\n`]*/g)) {
      expect(install).toMatch(
        /^npm install (@secretary\/partner-sdk|--save-dev @secretary\/cli|express|oauth4webapi)$/,
      );
    }
  });
});
