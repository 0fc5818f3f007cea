import { describe, expect, it } from "vitest";
import { call } from "../helpers/http";
import { businessFor, KNOWLEDGE, ROUTES, realPath } from "../helpers/partner-routes";

// docs/architecture.md, Principals and owner sides: every query is scoped to the credential's business. Each route
// that names a record by its id or key is sent, for a record of one business, another business's valid credential
// (of the same kind: live, or test for the sandbox's routes), once in the same shard and once in another: 404 as for
// a record that does not exist, and the record still answers its own business as before.

/** A knowledge key is the business's own name for an item: another business's PUT of it makes an item of its own. */
const UPSERT = "/knowledge/{key}";
const ID_ROUTES = ROUTES.filter(([method, path]) => path.includes("{") && !(method === "PUT" && path === UPSERT));

describe("another business's credential on every route that names a record", () => {
  it.each(ID_ROUTES)(
    "%s %s: 404 for another business, in its shard or another, and the record intact",
    async (method, path, ok, body) => {
      const { apiKey } = await businessFor(path, { shard: "eu1" });
      const url = await realPath(path, apiKey);
      for (const shard of ["eu1", "us1"] as const) {
        const other = await businessFor(path, { shard });
        const refused = await call(url, { method, body, key: other.apiKey });
        await expect(refused, shard).toHaveStatus(404);
      }
      const answered = await call(url, { method, body, key: apiKey });
      await expect(answered).toHaveStatus(ok);
    },
  );

  it("PUT /knowledge/{key}: another business's PUT of the same key makes its own item, and leaves this one as it was", async () => {
    const { apiKey } = await businessFor(UPSERT, { shard: "eu1" });
    const url = await realPath(UPSERT, apiKey);
    const other = await businessFor(UPSERT, { shard: "us1" });
    const theirs = { title: "Their hours", content: "Open on weekdays from 8 to 20." };
    await expect(await call(url, { method: "PUT", body: theirs, key: other.apiKey })).toHaveStatus(201);
    const titles = async (key: string) =>
      ((await (await call("/api/v1/knowledge", { key })).json()) as { data: Array<{ title: string }> }).data.map(
        (item) => item.title,
      );
    expect(await titles(apiKey)).toEqual([KNOWLEDGE.title]);
    expect(await titles(other.apiKey)).toEqual(["Their hours"]);
  });
});
