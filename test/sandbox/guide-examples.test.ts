import { describe, expect, it } from "vitest";
import guide from "../../docs/guides/sandbox.md?raw";
import { registerAction } from "../helpers/actions";
import { approveIntake, signedIn, switchActionOn } from "../helpers/dashboard";
import { BASE, call, json } from "../helpers/http";
import type { OwnerBusiness } from "../helpers/oauth";
import { receiverBox } from "../helpers/receiver";
import { subscribe } from "../helpers/webhooks";

/*
 * docs/guides/sandbox.md shows its requests as curl commands to `$API_BASE` and the answers as JSON. Each request is
 * sent here as the guide writes it, `$API_BASE` being the Worker's address, and the answer compared with the JSON the
 * guide shows below it in the same section: the same members, and the same values, but where the guide writes `…`
 * (a value of which only the part before `…` is fixed) and for ids, timestamps and durations, which vary (only their
 * type is fixed). An object with a `"…"` member may have more members. The delivery the guide shows is compared with the one
 * the sandbox's events bring to a real endpoint.
 */

const PRODUCTION = "https://partners.secretary.example";

type Example = { section: string; curl?: string; shown?: unknown };

/** Each section's curl command and the first JSON after it, in the guide's order. */
function examples(markdown: string): Example[] {
  const sections = markdown.split(/^(?=#{1,4} )/m);
  return sections.flatMap((text) => {
    const section = text.split("\n")[0] ?? "";
    const blocks = [...text.matchAll(/```(\w*)\n([\s\S]*?)```/g)].map(([, language, code]) => ({ language, code }));
    const examples: Example[] = [];
    for (const { language, code = "" } of blocks) {
      if (language === "sh" && code.includes("curl ")) examples.push({ section, curl: code });
      else if (language === "json") {
        const last = examples.at(-1);
        const shown = JSON.parse(code.replaceAll(PRODUCTION, BASE));
        if (last && last.shown === undefined) last.shown = shown;
        else examples.push({ section, shown });
      }
    }
    return examples;
  });
}

/** A curl command of the guide as a request: its method, path after `$API_BASE`, headers and body. */
function requestOf(curl: string, variables: Record<string, string>) {
  const line = curl.replace(/\\\n/g, " ").replace(/\$([A-Z_]+)/g, (whole, name: string) => variables[name] ?? whole);
  const [, method = "GET"] = / -X (\w+)/.exec(line) ?? [];
  const [, url = ""] = /curl -s (?:-X \w+ )?"?(\S+?)"?\s/.exec(line) ?? [];
  const headers = Object.fromEntries(
    [...line.matchAll(/-H "([^:]+): ([^"]+)"/g)].map(([, name = "", value = ""]) => [name, value]),
  );
  const [, body] = / -d '([^']*)'/.exec(line) ?? [];
  return { method, path: url.slice(BASE.length), headers, body };
}

const VARYING = /^(id|.+_id|.+_at|duration_ms)$/;

/** Fails with the path of the first difference between what the guide shows and the real answer. */
function expectAsShown(shown: unknown, real: unknown, path: string, key = "") {
  if (VARYING.test(key) && (typeof shown === "string" || typeof shown === "number")) {
    expect(typeof real, path).toBe(typeof shown);
  } else if (typeof shown === "string" && shown.includes("…")) {
    expect(typeof real, path).toBe("string");
    expect((real as string).startsWith(shown.slice(0, shown.indexOf("…"))), `${path}: ${real}`).toBe(true);
  } else if (Array.isArray(shown)) {
    expect(Array.isArray(real) && real.length, path).toBe(shown.length);
    for (const [i, each] of shown.entries()) expectAsShown(each, (real as unknown[])[i], `${path}[${i}]`);
  } else if (typeof shown === "object" && shown !== null) {
    expect(typeof real === "object" && real !== null && !Array.isArray(real), path).toBe(true);
    const members = Object.keys(shown).filter((name) => name !== "…");
    if ("…" in shown) expect(Object.keys(real as object), path).toEqual(expect.arrayContaining(members));
    else expect(Object.keys(real as object).sort(), path).toEqual(members.sort());
    for (const name of members) {
      expectAsShown(
        (shown as Record<string, unknown>)[name],
        (real as Record<string, unknown>)[name],
        `${path}.${name}`,
        name,
      );
    }
  } else {
    expect(real, path).toEqual(shown);
  }
}

/** The guide's intake and action (ids 116213527019777 and 116213527019265): the sandbox's own, made and switched on by its owner as the guide says. */
async function sandboxRecords(
  sandbox: { api_key: string; owner_email: string; owner_password: string },
  endpoint: string,
): Promise<Record<string, string>> {
  const key = sandbox.api_key;
  await subscribe(key, endpoint, ["booking.cancelled"]);
  const intake = await call("/api/v1/intakes", {
    key,
    method: "POST",
    body: {
      name: "table_request",
      title: "Table request",
      description: "When a customer asks for a table for a group. Not for orders or opening hours.",
      fields: [
        { id: "full_name", label: "What is your name?", type: "text", required: true },
        { id: "email", label: "Which email address?", type: "email", required: true },
        { id: "guests", label: "How many guests?", type: "number", required: true },
      ],
    },
  });
  await expect(intake).toHaveStatus(201);
  const { id: intakeId } = await json<{ id: number }>(intake);
  const answer = encodeURIComponent(JSON.stringify({ available: true, times: ["12:30", "19:00"] }));
  const action = await registerAction(key, "check_availability", {
    url: receiverBox("sandbox-guide-action").url(`/json/${answer}`),
    parameters: { type: "object", properties: { date: { type: "string", description: "The day" } }, required: [] },
  });
  const jar = await signedIn({
    owner: { email: sandbox.owner_email, password: sandbox.owner_password },
  } as OwnerBusiness);
  await expect(await approveIntake(jar, intakeId)).toHaveStatus(303);
  await expect(await switchActionOn(jar, action.id)).toHaveStatus(303);
  return {
    "/api/v1/sandbox/intakes/116213527019777/": `/api/v1/sandbox/intakes/${intakeId}/`,
    "/api/v1/sandbox/actions/116213527019265/": `/api/v1/sandbox/actions/${action.id}/`,
  };
}

describe("the sandbox guide's examples, sent to the Worker", () => {
  const all = examples(guide);

  it("shows a request and its answer in every section it has them", () => {
    expect(all.filter((each) => each.curl).length).toBeGreaterThanOrEqual(4);
    expect(all.every((each) => each.curl === undefined || each.curl.includes("$API_BASE/"))).toBe(true);
  });

  it("answers each request as the guide shows, and delivers the envelope the guide shows", async () => {
    const variables: Record<string, string> = { API_BASE: BASE };
    const box = receiverBox("sandbox-guide");
    let ids: Record<string, string> = {};
    for (const example of all) {
      if (example.curl === undefined) {
        // The delivery the guide shows: the last event of the emitted ones, as an endpoint received it.
        const [delivery] = (await box.arrived(1)).filter(
          (each) => each.headers["x-service-event"] === "booking.cancelled",
        );
        expectAsShown(example.shown, JSON.parse(delivery?.body ?? "null"), example.section);
        continue;
      }
      const { method, path, headers, body } = requestOf(example.curl, variables);
      const own = path.replace(/^\/api\/v1\/sandbox\/(intakes|actions)\/\d+\//, (whole) => ids[whole] ?? whole);
      const response = await call(own, { method, headers, body });
      const text = await response.text();
      expect(response.status, `${example.section}: ${text}`).toBeLessThan(300);
      const answer = JSON.parse(text);
      if (example.shown !== undefined) expectAsShown(example.shown, answer, example.section);
      if (typeof answer.api_key === "string") {
        variables.SANDBOX_KEY = answer.api_key;
        ids = await sandboxRecords(answer, box.url("/hooks"));
      }
    }
  });
});
