import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import {
  SIGN_IN_FAILURE_LIMITS,
  SIGN_IN_WINDOW_MS,
  type SignInThrottle,
} from "../../src/durable-objects/sign-in-throttle";
import { BASE } from "../helpers/http";
import {
  authorizeQuery,
  browse,
  CookieJar,
  createOwnerBusiness,
  csrfTokenOf,
  registerClient,
  validAuthorizationParams,
} from "../helpers/oauth";

/**
 * docs/architecture.md, Sign-in. Every test signs in from client addresses (`CF-Connecting-IP`) and with email
 * addresses of its own, so no count leaks between tests.
 */

const client = await registerClient({ client_name: "Throttle Test App" });

const randomByte = () => crypto.getRandomValues(new Uint8Array(1))[0] ?? 0;
const freshAddress = () => `10.${randomByte()}.${randomByte()}.${randomByte()}`;
const freshEmail = () => `nobody-${crypto.randomUUID()}@example.com`;

type Credentials = { email: string; password: string };

/**
 * A browser on one sign-in page (the consent flow's or the dashboard's), from one client address: `submit` posts
 * the form as often as a test needs, with the page's own CSRF token.
 */
async function signInForm(surface: "consent" | "dashboard", address: string) {
  const jar = new CookieJar();
  const headers: Record<string, string> = { "CF-Connecting-IP": address };
  let pagePath = "/dashboard/sign-in";
  let formPath = "/dashboard/sign-in";
  if (surface === "consent") {
    const query = authorizeQuery((await validAuthorizationParams(client)).params);
    pagePath = `/oauth/authorize?${query}`;
    formPath = `/oauth/authorize/sign-in?${query}`;
  } else {
    // hono/csrf: a dashboard form comes with the page's own Origin.
    headers.Origin = BASE;
  }
  const csrf = csrfTokenOf(await (await browse(jar, pagePath, { headers })).text());
  return {
    jar,
    submit: (credentials: Credentials) =>
      browse(jar, formPath, { form: { csrf_token: csrf, ...credentials }, headers }),
  };
}

/** Posts `times` failed sign-ins for `email`; each must be the ordinary 401. */
async function fail(form: Awaited<ReturnType<typeof signInForm>>, email: string, times: number) {
  for (let i = 0; i < times; i++) {
    const response = await form.submit({ email, password: `wrong ${i}` });
    await expect(response).toHaveStatus(401);
  }
}

/** A 429 sign-in page: `Retry-After` within the window, the sentence, the form again, no session. */
async function expectLocked(response: Response, jar: CookieJar) {
  await expect(response).toHaveStatus(429);
  const retryAfter = Number(response.headers.get("Retry-After"));
  expect(retryAfter).toBeGreaterThan(0);
  expect(retryAfter).toBeLessThanOrEqual(SIGN_IN_WINDOW_MS / 1000);
  const html = await response.text();
  expect(html).toContain("Too many sign-in attempts have failed. Please try again later, in ");
  expect(html).toContain('name="password"');
  expect(jar.cookies.has("__Host-owner_session")).toBe(false);
  return retryAfter;
}

const emailThrottle = (email: string) => env.SIGN_IN_THROTTLE.get(env.SIGN_IN_THROTTLE.idFromName(`email:${email}`));

describe("sign-in throttling over HTTP (docs/architecture.md, Sign-in)", () => {
  it.each(["consent", "dashboard"] as const)(
    "%s: after 10 failures for one email the next attempt is 429 with Retry-After, the right password too, and no PBKDF2 runs",
    async (surface) => {
      const { owner } = await createOwnerBusiness();
      const form = await signInForm(surface, freshAddress());
      await fail(form, owner.email, SIGN_IN_FAILURE_LIMITS.email);
      const pbkdf2 = vi.spyOn(crypto.subtle, "deriveBits");
      try {
        const retryAfter = await expectLocked(
          await form.submit({ email: owner.email, password: "wrong again" }),
          form.jar,
        );
        expect(retryAfter).toBeGreaterThan(SIGN_IN_WINDOW_MS / 1000 - 60);
        await expectLocked(await form.submit(owner), form.jar);
        // The same address in another case and with spaces is the same account (normalised as sign-in compares it).
        await expectLocked(await form.submit({ ...owner, email: ` ${owner.email.toUpperCase()} ` }), form.jar);
        expect(pbkdf2).not.toHaveBeenCalled();
      } finally {
        pbkdf2.mockRestore();
      }
    },
  );

  it("locks the email address wherever it is tried from; another email from another address is unaffected", async () => {
    const victim = await createOwnerBusiness();
    const other = await createOwnerBusiness();
    const attacker = await signInForm("consent", freshAddress());
    await fail(attacker, victim.owner.email, SIGN_IN_FAILURE_LIMITS.email);
    const elsewhere = await signInForm("dashboard", freshAddress());
    await expectLocked(await elsewhere.submit(victim.owner), elsewhere.jar);
    const bystander = await signInForm("consent", freshAddress());
    await expect(await bystander.submit(other.owner)).toHaveStatus(303);
    // Ten failures do not lock the attacker's address for other accounts (its limit is 50).
    await expect(await attacker.submit(other.owner)).toHaveStatus(303);
  });

  it("accepts the right password once the failures have left the window, and that success clears the count", async () => {
    const { owner } = await createOwnerBusiness();
    const form = await signInForm("consent", freshAddress());
    await fail(form, owner.email, SIGN_IN_FAILURE_LIMITS.email);
    await expectLocked(await form.submit(owner), form.jar);
    // 15 minutes pass for the stored failures (the object's own clock is driven through RPC below).
    await runInDurableObject<SignInThrottle, void>(emailThrottle(owner.email), (_instance, state) => {
      state.storage.sql.exec("UPDATE failures SET at = at - ?", SIGN_IN_WINDOW_MS);
    });
    await expect(await form.submit(owner)).toHaveStatus(303);
    const left = await runInDurableObject<SignInThrottle, unknown[]>(emailThrottle(owner.email), (_i, state) =>
      state.storage.sql.exec("SELECT * FROM failures").toArray(),
    );
    expect(left).toEqual([]);
  });

  it("a success clears the email's count, and successes never count", async () => {
    const { owner } = await createOwnerBusiness();
    const address = freshAddress();
    // A success spends the form's CSRF cookie: each sign-in after one starts from a fresh page.
    const succeed = async () => expect(await (await signInForm("dashboard", address)).submit(owner)).toHaveStatus(303);
    for (let i = 0; i < SIGN_IN_FAILURE_LIMITS.email + 2; i++) await succeed();
    await fail(await signInForm("dashboard", address), owner.email, SIGN_IN_FAILURE_LIMITS.email - 1);
    await succeed();
    // Counted afresh: ten more failures are each an ordinary 401, the eleventh attempt is refused.
    const form = await signInForm("dashboard", address);
    await fail(form, owner.email, SIGN_IN_FAILURE_LIMITS.email);
    await expectLocked(await form.submit(owner), form.jar);
  });

  it("50 failures from one client address, across different email addresses, lock that address", {
    timeout: 20_000,
  }, async () => {
    const { owner } = await createOwnerBusiness();
    const address = freshAddress();
    const attacker = await signInForm("dashboard", address);
    for (let i = 0; i < SIGN_IN_FAILURE_LIMITS.address; i++) await fail(attacker, freshEmail(), 1);
    // The address is locked for every account, the right password included; the account itself is not.
    await expectLocked(await attacker.submit({ email: freshEmail(), password: "x" }), attacker.jar);
    const fromThere = await signInForm("consent", address);
    await expectLocked(await fromThere.submit(owner), fromThere.jar);
    const fromElsewhere = await signInForm("consent", freshAddress());
    await expect(await fromElsewhere.submit(owner)).toHaveStatus(303);
  });

  it("counts simultaneous attempts exactly: of 16 wrong passwords at once, 10 are checked and 6 refused", async () => {
    const { owner } = await createOwnerBusiness();
    const form = await signInForm("consent", freshAddress());
    const statuses = await Promise.all(
      Array.from({ length: 16 }, (_, i) => form.submit({ email: owner.email, password: `guess ${i}` })),
    );
    expect(statuses.map((response) => response.status).sort()).toEqual([
      ...Array<number>(10).fill(401),
      ...Array<number>(6).fill(429),
    ]);
  });
});

describe("the SignInThrottle object, its clock driven through RPC", () => {
  // A future instant: the alarms these counts set cannot fire during the run.
  const start = Date.parse("2031-05-01T10:00:00.000Z");
  const stubOf = () => emailThrottle(freshEmail());
  /** An attempt let through and reported failed, at `now`. */
  const failAt = async (stub: ReturnType<typeof stubOf>, key: "email" | "address", now: number) => {
    const attempt = await stub.attempt(key, now);
    if (!attempt.allowed) throw new Error(`refused at ${now}`);
    await stub.settle(key, attempt.attemptId, "failed", now);
  };

  it("refuses the 11th attempt for an email until the oldest failure has left the 15-minute window", async () => {
    const stub = stubOf();
    for (let i = 0; i < 10; i++) await failAt(stub, "email", start + i * 1000);
    expect(await stub.attempt("email", start + 10_000)).toEqual({ allowed: false, retryAfterSeconds: 890 });
    expect(await stub.attempt("email", start + SIGN_IN_WINDOW_MS - 1)).toEqual({
      allowed: false,
      retryAfterSeconds: 1,
    });
    // The failure at `start` has left: one more attempt, then the one at start + 1 s is the next to leave.
    await failAt(stub, "email", start + SIGN_IN_WINDOW_MS);
    expect(await stub.attempt("email", start + SIGN_IN_WINDOW_MS + 1)).toEqual({
      allowed: false,
      retryAfterSeconds: 1,
    });
  });

  it("allows 50 failures for a client address, and refuses the 51st", async () => {
    const stub = env.SIGN_IN_THROTTLE.get(env.SIGN_IN_THROTTLE.idFromName(`address:${freshAddress()}`));
    for (let i = 0; i < 50; i++) await failAt(stub, "address", start + i);
    expect(await stub.attempt("address", start + 50)).toEqual({ allowed: false, retryAfterSeconds: 900 });
  });

  it("counts attempts whose outcome is pending, and keeps only the failures", async () => {
    const stub = stubOf();
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) {
      const attempt = await stub.attempt("email", start);
      ids.push(attempt.allowed ? attempt.attemptId : "");
    }
    expect(await stub.attempt("email", start)).toEqual({ allowed: false, retryAfterSeconds: 900 });
    for (const id of ids.slice(0, 9)) await stub.settle("email", id, "failed", start);
    await stub.settle("email", ids[9] ?? "", "unchecked", start);
    // Nine failures: one more attempt, and once it has failed too, the next is refused.
    await failAt(stub, "email", start);
    expect((await stub.attempt("email", start)).allowed).toBe(false);
  });

  it("a success clears an email address's failures, not a client address's", async () => {
    const email = stubOf();
    const address = env.SIGN_IN_THROTTLE.get(env.SIGN_IN_THROTTLE.idFromName(`address:${freshAddress()}`));
    for (const [stub, key, left] of [
      [email, "email", 0],
      [address, "address", 3],
    ] as const) {
      for (let i = 0; i < 3; i++) await failAt(stub, key, start);
      const attempt = await stub.attempt(key, start);
      if (attempt.allowed) await stub.settle(key, attempt.attemptId, "succeeded", start);
      const stored = await runInDurableObject<SignInThrottle, unknown[]>(stub, (_i, state) =>
        state.storage.sql.exec("SELECT at FROM failures").toArray(),
      );
      expect(stored).toHaveLength(left);
    }
  });

  it("counts an attempt never reported within a minute as a failure", async () => {
    const stub = stubOf();
    for (let i = 0; i < 10; i++) expect((await stub.attempt("email", start)).allowed).toBe(true);
    expect((await stub.attempt("email", start + 59_999)).allowed).toBe(false);
    // A minute on, the ten are failures: stored, and still refusing until they leave the window.
    expect(await stub.attempt("email", start + 60_000)).toEqual({ allowed: false, retryAfterSeconds: 840 });
    const rows = await runInDurableObject<SignInThrottle, unknown[]>(stub, (_i, state) =>
      state.storage.sql.exec("SELECT count(*) AS n FROM failures").toArray(),
    );
    expect(rows).toEqual([{ n: 10 }]);
  });

  it("lets exactly 10 of 30 simultaneous attempts through", async () => {
    const stub = stubOf();
    const attempts = await Promise.all(Array.from({ length: 30 }, () => stub.attempt("email", start)));
    expect(attempts.filter((attempt) => attempt.allowed)).toHaveLength(10);
  });

  it("deletes its storage by alarm once every failure has left the window, and counts afresh after", async () => {
    const stub = stubOf();
    await failAt(stub, "email", start);
    expect(await runInDurableObject<SignInThrottle, number | null>(stub, (_i, state) => state.storage.getAlarm())).toBe(
      start + SIGN_IN_WINDOW_MS,
    );
    // A failure still in the window keeps the object, with the alarm moved to when that failure leaves.
    await runInDurableObject<SignInThrottle, void>(stub, (_i, state) => {
      state.storage.sql.exec("UPDATE failures SET at = ?", Date.now() - 1000);
    });
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    const alarm = await runInDurableObject<SignInThrottle, number | null>(stub, (_i, state) =>
      state.storage.getAlarm(),
    );
    expect(alarm).toBeGreaterThan(Date.now() + SIGN_IN_WINDOW_MS - 60_000);
    // Once it has left, nothing of the key remains.
    await runInDurableObject<SignInThrottle, void>(stub, (_i, state) => {
      state.storage.sql.exec("UPDATE failures SET at = ?", Date.now() - SIGN_IN_WINDOW_MS - 1);
    });
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    const tables = await runInDurableObject<SignInThrottle, unknown[]>(stub, (_i, state) =>
      state.storage.sql.exec("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'failures'").toArray(),
    );
    expect(tables).toEqual([]);
    await failAt(stub, "email", start);
    expect(
      await runInDurableObject<SignInThrottle, unknown[]>(stub, (_i, state) =>
        state.storage.sql.exec("SELECT at FROM failures").toArray(),
      ),
    ).toEqual([{ at: start }]);
  });
});
