import { expect } from "vitest";
import { BASE } from "./http";
import { browse, CookieJar, csrfTokenOf, type OwnerBusiness } from "./oauth";

/** A form post as the browser sends it: with the page's own Origin (hono/csrf refuses any other). */
export const post = (jar: CookieJar, path: string, form: Record<string, string | undefined> = {}, origin = BASE) =>
  browse(jar, path, { method: "POST", form, headers: { Origin: origin } });

/** The owner's sign-in on the dashboard's own page, its form posted with the page's CSRF token: its answer. */
export async function signInAttempt(jar: CookieJar, { owner }: OwnerBusiness) {
  const page = await browse(jar, "/dashboard/sign-in");
  return post(jar, "/dashboard/sign-in", {
    csrf_token: csrfTokenOf(await page.text()),
    email: owner.email,
    password: owner.password,
  });
}

/** Signs the owner in on the dashboard's own sign-in page; answers the jar that holds the session. */
export async function signedIn(owner: OwnerBusiness) {
  const jar = new CookieJar();
  const posted = await signInAttempt(jar, owner);
  await expect(posted).toHaveStatus(303);
  expect(posted.headers.get("Location")).toBe("/dashboard");
  return jar;
}

/** A dashboard page as the signed-in owner gets it: its status and HTML. */
export async function page(jar: CookieJar, path: string) {
  const response = await browse(jar, path);
  return { status: response.status, html: await response.text() };
}

/** Posts a page's form as the browser would: with the session's CSRF token, read from the page at `from`. */
export async function submit(jar: CookieJar, from: string, action: string, form: Record<string, string> = {}) {
  const csrf = csrfTokenOf((await page(jar, from)).html);
  return post(jar, action, { csrf_token: csrf, ...form });
}

/**
 * The owner switches the action on from its page, at the version (url, description, parameters) reviewed there
 * (switching an action on is guarded like an intake's; docs/decisions.md, The owner's dashboard).
 */
export async function switchActionOn(jar: CookieJar, id: number) {
  const path = `/dashboard/actions/${id}`;
  const reviewed = /name="reviewed" value="([0-9a-f]{64})"/.exec((await page(jar, path)).html)?.[1] ?? "";
  return submit(jar, path, `${path}/on`, { reviewed });
}

/** The owner approves the intake from its approval screen, at the version shown there. */
export async function approveIntake(jar: CookieJar, id: number) {
  const path = `/dashboard/intakes/${id}`;
  const version = /name="version" value="(\d+)"/.exec((await page(jar, path)).html)?.[1] ?? "";
  return submit(jar, path, `${path}/on`, { version });
}

const ENTITIES: Record<string, string> = { "#39": "'", quot: '"', lt: "<", gt: ">", amp: "&" };

/**
 * The text of the element marked `data-testid="<id>"`, tags removed: up to the first closing tag of its name, so
 * for elements without a nested one of the same name (a section, a card); the entities hono escapes, decoded.
 */
export function testIdText(html: string, id: string): string {
  const match = new RegExp(`<(\\w+)[^>]*data-testid="${id}"[^>]*>([\\s\\S]*?)</\\1>`).exec(html);
  const text = (match?.[2] ?? "")
    .replace(/<[^>]+>/g, " ")
    .replace(/\s+/g, " ")
    .trim();
  return text.replace(/&(#39|quot|lt|gt|amp);/g, (_, name: string) => ENTITIES[name] ?? "");
}

/** How many forms of the page post to `action`. */
export const formsPostingTo = (html: string, action: string) =>
  [...html.matchAll(/<form [^>]*action="([^"]+)"/g)].filter((match) => match[1] === action).length;
