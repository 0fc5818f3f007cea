import { describe, expect, it } from "vitest";
import committed from "../../openapi.json";
import { call, json } from "../helpers/http";

/*
 * openapi.json is the document a partner's tools read (docs/decisions.md, The contract in a partner's
 * tools; docs/openapi.md), so it must be the one the routes produce: the served document, for another server.
 */
describe("the committed openapi.json", () => {
  it("names the production server", () => {
    expect(committed.servers).toEqual([{ url: "https://partners.secretary.example/api/v1" }]);
  });

  it("is the document the routes produce", async () => {
    const served = await json<typeof committed>(await call("/api/v1/openapi.json"));
    expect(
      { ...served, servers: committed.servers },
      "openapi.json is out of date with the routes: run `npm run openapi` and commit the result",
    ).toEqual(committed);
  });
});
