import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";

// Later outbound tests (webhook deliveries, action calls) rely on workerd reaching the receiver that
// test/global-setup.ts starts on the host; this proves the path and the receiver's recording and behaviours.
describe("the test receiver", () => {
  it("records what reaches it and answers as the path asks", async () => {
    const box = `box-${crypto.randomUUID()}`;
    const ok = await fetch(`${env.RECEIVER_URL}/${box}/hello`, { method: "POST", body: '{"a":1}' });
    await expect(ok).toHaveStatus(200);
    const failing = await fetch(`${env.RECEIVER_URL}/${box}/status/503`, { method: "POST" });
    await expect(failing).toHaveStatus(503);
    const redirect = await fetch(`${env.RECEIVER_URL}/${box}/redirect`, { redirect: "manual" });
    await expect(redirect).toHaveStatus(302);

    const recorded = (await (await fetch(`${env.RECEIVER_URL}/__recorded/${box}`)).json()) as Array<{
      method: string;
      path: string;
      body: string;
    }>;
    expect(recorded.map((r) => `${r.method} ${r.path}`)).toEqual([
      `POST /${box}/hello`,
      `POST /${box}/status/503`,
      `GET /${box}/redirect`,
    ]);
    expect(recorded[0]?.body).toBe('{"a":1}');
  });
});
