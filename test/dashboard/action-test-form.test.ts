import { describe, expect, it } from "vitest";
import { page, signedIn, submit, testIdText } from "../helpers/dashboard";
import { call, json } from "../helpers/http";
import { createOwnerBusiness } from "../helpers/oauth";
import { receiverBox } from "../helpers/receiver";

// docs/architecture.md, the owner's dashboard: an action's page says its parameters in words, and its Test form has
// one control per parameter, read back into typed arguments, with the answer shown readable.

const PARAMETERS = {
  type: "object",
  properties: {
    sku: { type: "string", description: "Product code" },
    quantity: { type: "integer", description: "How many bottles" },
    price: { type: "number", description: "Highest price in euros" },
    gift_wrap: { type: "boolean", description: "Wrapped as a gift" },
    size: { type: "string", description: "Bottle size", enum: ["small", "large"] },
  },
  required: ["sku", "size"],
};

describe("an action's parameters and Test form on its page", async () => {
  const mine = await createOwnerBusiness();
  const jar = await signedIn(mine);

  /** An action registered with the key, calling a fresh receiver box at `path` (off: the owner's Test needs no on). */
  async function stockAction(path = "/ok") {
    const box = receiverBox("test-form");
    const created = await call("/api/v1/actions", {
      key: mine.apiKey,
      method: "POST",
      body: {
        name: `stock_${crypto.randomUUID().slice(0, 8)}`,
        title: "Check stock",
        description: "Tells whether a product is in stock today.",
        url: box.url(path),
        parameters: PARAMETERS,
      },
    });
    await expect(created).toHaveStatus(201);
    const { id } = await json<{ id: number }>(created);
    return { id, box, path: `/dashboard/actions/${id}` };
  }
  const test = (path: string, form: Record<string, string>) => submit(jar, path, `${path}/test`, form);

  it("lists the parameters in words, with the raw schema only behind Technical details", async () => {
    const { path } = await stockAction();
    const { html } = await page(jar, path);
    const list = testIdText(html, "parameters");
    expect(list).toContain("sku : Product code (required; text)");
    expect(list).toContain("quantity : How many bottles (optional; a whole number)");
    expect(list).toContain("price : Highest price in euros (optional; a number)");
    expect(list).toContain("gift_wrap : Wrapped as a gift (optional; yes or no)");
    expect(list).toContain("size : Bottle size (required; one of: small, large)");
    expect(html).toMatch(/<details><summary>Technical details<\/summary><pre>\{/);
    expect(html.indexOf("&quot;properties&quot;")).toBeGreaterThan(html.indexOf("Technical details"));
  });

  it("builds one labelled control per parameter, of its type, the required ones marked", async () => {
    const { path } = await stockAction();
    const { html } = await page(jar, path);
    expect(html).not.toContain("<textarea");
    const control = (name: string) =>
      new RegExp(`<(input|select)[^>]*name="arguments\\.${name}"[^>]*>`).exec(html)?.[0];
    expect(control("sku")).toMatch(/<input type="text" id="argument-sku"[^>]* required=""/);
    expect(control("quantity")).toMatch(/<input type="number" step="1"/);
    expect(control("quantity")).not.toContain("required");
    expect(control("price")).toMatch(/<input type="number" step="any"/);
    expect(control("gift_wrap")).toMatch(/^<select id="argument-gift_wrap"/);
    expect(control("size")).toMatch(/^<select id="argument-size"[^>]* required=""/);
    for (const name of ["sku", "quantity", "price", "gift_wrap", "size"]) {
      expect(html).toContain(`<label for="argument-${name}">`);
    }
    expect(html).toContain('<option value="yes">yes</option><option value="no">no</option>');
    expect(html).toContain('<option value="small">small</option><option value="large">large</option>');
  });

  it("shows direction-changing characters of the answer as their code points, in the readable and the raw answer", async () => {
    const answer = encodeURIComponent('{"shelf":"B2\u202Eevil\u202C"}');
    const { path } = await stockAction(`/json/${answer}`);
    const tested = await test(path, { "arguments.sku": "SHAMPOO-1", "arguments.size": "small" });
    const html = await tested.text();
    expect(testIdText(html, "answer")).toBe("shelf : B2⟨U+202E⟩evil⟨U+202C⟩");
    expect(testIdText(html, "raw-answer")).toBe('{"shelf":"B2⟨U+202E⟩evil⟨U+202C⟩"}');
    expect(html).not.toContain("\u202E");
  });

  it("sends the typed arguments, shows the answer readable with the raw JSON, and keeps the values", async () => {
    const answer = encodeURIComponent(JSON.stringify({ in_stock: true, items: 3, shelf: "B2" }));
    const { path, box } = await stockAction(`/json/${answer}`);
    const tested = await test(path, {
      "arguments.sku": "SHAMPOO-1",
      "arguments.quantity": "2",
      "arguments.price": "12.5",
      "arguments.gift_wrap": "no",
      "arguments.size": "large",
    });
    await expect(tested).toHaveStatus(200);
    const [request] = await box.recorded();
    expect(JSON.parse(request?.body ?? "{}").arguments).toEqual({
      sku: "SHAMPOO-1",
      quantity: 2,
      price: 12.5,
      gift_wrap: false,
      size: "large",
    });
    const html = await tested.text();
    expect(testIdText(html, "test-result")).toContain("It answered. Result: success (HTTP 200)");
    expect(testIdText(html, "answer")).toBe("in_stock : yes items : 3 shelf : B2");
    expect(html).toContain("<summary>Show the raw answer</summary>");
    expect(testIdText(html, "raw-answer")).toBe('{"in_stock":true,"items":3,"shelf":"B2"}');
    expect(html).toMatch(/name="arguments\.sku"[^>]* value="SHAMPOO-1"/);
    expect(html).toMatch(/name="arguments\.quantity"[^>]* value="2"/);
    expect(html).toMatch(/name="arguments\.price"[^>]* value="12.5"/);
    expect(html).toContain('<option value="no" selected="">no</option>');
    expect(html).toContain('<option value="large" selected="">large</option>');
  });

  it("leaves empty optional fields out", async () => {
    const { path, box } = await stockAction();
    const tested = await test(path, { "arguments.sku": "GEL-2", "arguments.quantity": "", "arguments.size": "small" });
    await expect(tested).toHaveStatus(200);
    const [request] = await box.recorded();
    expect(JSON.parse(request?.body ?? "{}").arguments).toEqual({ sku: "GEL-2", size: "small" });
    expect(testIdText(await tested.text(), "answer")).toBe("ok : yes");
  });

  it("answers a missing required value in place, calling nothing and keeping what was typed", async () => {
    const { path, box } = await stockAction();
    const tested = await test(path, { "arguments.sku": " ", "arguments.quantity": "4", "arguments.size": "small" });
    await expect(tested).toHaveStatus(422);
    const html = await tested.text();
    expect(testIdText(html, "test-problem")).toContain('The required parameter "sku" is missing');
    expect(html).toMatch(/name="arguments\.quantity"[^>]* value="4"/);
    expect(await box.recorded()).toEqual([]);
  });

  it("says in words when a number field holds no number, calling nothing", async () => {
    const { path, box } = await stockAction();
    const tested = await test(path, { "arguments.sku": "A", "arguments.quantity": "2.5", "arguments.size": "small" });
    await expect(tested).toHaveStatus(400);
    const html = await tested.text();
    expect(testIdText(html, "test-problem")).toBe("“quantity” must be a whole number, and “2.5” is not.");
    expect(html).toMatch(/name="arguments\.quantity"[^>]* value="2.5"/);
    expect(await box.recorded()).toEqual([]);
  });

  it("shows a value outside the allowed ones as refused, sending nothing", async () => {
    const { path, box } = await stockAction();
    const tested = await test(path, { "arguments.sku": "A", "arguments.size": "huge" });
    await expect(tested).toHaveStatus(200);
    const result = testIdText(await tested.text(), "test-result");
    expect(result).toContain("Not sent: the values do not fit the parameters. Result: rejected");
    expect(result).toContain('"size" must be one of "small", "large"');
    expect(await box.recorded()).toEqual([]);
  });

  it("says in words that the action did not answer in time", async () => {
    const { path } = await stockAction("/delay/6000");
    const tested = await test(path, { "arguments.sku": "A", "arguments.size": "small" });
    const result = testIdText(await tested.text(), "test-result");
    expect(result).toContain("It did not answer in time. Result: timeout");
    expect(result).toContain("no answer within 5 seconds");
  }, 20_000);
});
