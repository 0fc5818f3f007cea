import { describe, expect, it } from "vitest";
import committed from "../../openapi.json";
import { BASE, call } from "../helpers/http";

/*
 * openapi.json is the document a partner's tools read (docs/decisions.md, The contract in a partner's
 * tools; docs/openapi.md), so it must be the one the routes produce: the served document, for another server.
 */
describe("the committed openapi.json", () => {
  it("names the production server", () => {
    expect(committed.servers).toEqual([{ url: "https://partners.secretary.example/api/v1" }]);
  });

  it("is the document the routes produce", async () => {
    // The servers (sandbox creation names its own) are the Worker's BASE_URL: the production one in the file.
    const text = await (await call("/api/v1/openapi.json")).text();
    const served = JSON.parse(text.replaceAll(BASE, "https://partners.secretary.example"));
    expect(served, "openapi.json is out of date with the routes: run `npm run openapi` and commit the result").toEqual(
      committed,
    );
  });
});
