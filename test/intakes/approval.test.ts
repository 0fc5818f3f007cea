import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { shardDatabase } from "../../src/db/client";
import { apiKeys, type IntakeField, intakes } from "../../src/db/schema";
import { apiKeyNotFound, revokeApiKey } from "../../src/domain/access/api-keys";
import { authenticatePartner } from "../../src/domain/access/principals";
import { changeList } from "../../src/domain/intakes/change-list";
import { approvalSummary, switchIntakeOff, switchIntakeOn } from "../../src/domain/intakes/owner-decisions";
import { contactDetailsOf, identityQuestionsOf } from "../../src/domain/intakes/question-detection";
import { intakeNotFound, patchIntake as patchIntakeDirectly } from "../../src/domain/intakes/registration";
import { ApiError } from "../../src/lib/api-error";
import { idOrNotFound } from "../../src/lib/validation";
import { deps, testDependencies } from "../helpers/dependencies";
import { createApiKey, createBusiness, DEFAULT_SHARD, db, shardD1 } from "../helpers/fixtures";
import { call, expectError, json } from "../helpers/http";
import { createIntake, getIntake, type Intake, patchIntake } from "../helpers/intakes";
import { apiKeyPrincipal } from "../helpers/principals";

const OLD = "2020-01-01T00:00:00.000Z";
const rowOf = (id: number) => db.select().from(intakes).where(eq(intakes.id, id)).get();

async function expectApiError(promise: Promise<unknown>, status: number, sentence?: RegExp) {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ApiError);
  expect((error as ApiError).status).toBe(status);
  if (sentence) expect((error as ApiError).message).toMatch(sentence);
}

/**
 * The real D1 binding, except that `interfere` runs (once) just before the batch that carries the first UPDATE of
 * `intakes` (a switch is written in one batch with its event): another request landing between a read and the write
 * that depends on it, deterministically and without sleeping.
 */
function interferingD1(interfere: () => Promise<unknown>) {
  let pending = true;
  let run: Promise<unknown> = Promise.resolve();
  return new Proxy(shardD1, {
    get(target, property) {
      if (property === "batch") {
        return async (statements: D1PreparedStatement[]) => {
          await run;
          return target.batch(statements);
        };
      }
      if (property === "prepare") {
        return (query: string) => {
          if (pending && /^update "intakes"/.test(query)) {
            pending = false;
            run = interfere();
          }
          return target.prepare(query);
        };
      }
      const value = Reflect.get(target, property);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

describe("the Intake enabled state table", async () => {
  const { business, apiKey } = await createBusiness();

  it("(none) → POST → false", async () => {
    const intake = await createIntake(apiKey, { name: "created_off" });
    expect(intake.enabled).toBe(false);
    await db.delete(intakes).where(eq(intakes.id, intake.id));
  });

  it("false → owner switches on → true, recording the approved version and content", async () => {
    const intake = await createIntake(apiKey, { name: "switch_on" });
    await db.update(intakes).set({ updatedAt: OLD }).where(eq(intakes.id, intake.id));
    const on = await switchIntakeOn(deps, business.id, intake.id);
    expect(on.enabled).toBe(true);
    expect(on.updatedAt > OLD).toBe(true);
    expect(await json(await getIntake(apiKey, intake.id))).toEqual(on);
    expect(await rowOf(intake.id)).toMatchObject({
      enabled: true,
      version: 1,
      approvedVersion: 1,
      approvedContent: { title: intake.title, description: intake.description, fields: intake.fields },
    });
    // Switching on again changes nothing.
    expect(await switchIntakeOn(deps, business.id, intake.id)).toEqual(on);
    await db.delete(intakes).where(eq(intakes.id, intake.id));
  });

  it("true → owner switches off → false, keeping the approval", async () => {
    const intake = await createIntake(apiKey, { name: "switch_off" });
    await switchIntakeOn(deps, business.id, intake.id);
    const off = await switchIntakeOff(deps, business.id, intake.id);
    expect(off.enabled).toBe(false);
    expect(await json(await getIntake(apiKey, intake.id))).toEqual(off);
    expect(await rowOf(intake.id)).toMatchObject({ enabled: false, approvedVersion: 1 });
    // Switching off again changes nothing.
    expect(await switchIntakeOff(deps, business.id, intake.id)).toEqual(off);
    await db.delete(intakes).where(eq(intakes.id, intake.id));
  });

  it("true → PATCH with a change → false; the owner sees the change question by question", async () => {
    const intake = await createIntake(apiKey, { name: "patched" });
    await switchIntakeOn(deps, business.id, intake.id);
    const [name, email, budget] = intake.fields;
    const fields = [
      { ...email, required: false },
      name,
      { id: "phone", label: "Your phone number?", type: "phone", required: false },
    ];
    const response = await patchIntake(apiKey, intake.id, { title: "Quote request (kitchens)", fields });
    await expect(response).toHaveStatus(200);
    expect((await json<Intake>(response)).enabled).toBe(false);
    expect(await rowOf(intake.id)).toMatchObject({
      enabled: false,
      version: 2,
      approvedVersion: 1,
      approvedContent: { title: intake.title, fields: intake.fields },
    });

    const summary = await approvalSummary(deps, business.id, intake.id);
    expect(summary.changes).toEqual({
      sinceVersion: 1,
      title: { before: "Quote request", after: "Quote request (kitchens)" },
      description: null,
      questions: [
        {
          change: "changed",
          id: "email",
          index: 0,
          properties: [{ property: "required", before: true, after: false }],
        },
        // Of two questions that swapped places, the one now first stays put and the other one moved.
        { change: "moved", id: "full_name", from: 0, to: 1 },
        {
          change: "added",
          id: "phone",
          index: 2,
          question: { id: "phone", label: "Your phone number?", type: "phone", required: false },
        },
        { change: "removed", id: "budget", index: 2, question: budget },
      ],
    });
    // Approving again makes the change list empty.
    await switchIntakeOn(deps, business.id, intake.id, { version: 2 });
    expect((await approvalSummary(deps, business.id, intake.id)).changes).toEqual({
      sinceVersion: 2,
      title: null,
      description: null,
      questions: [],
    });
    await db.delete(intakes).where(eq(intakes.id, intake.id));
  });

  it("true → PATCH with the same values → true, nothing changes", async () => {
    const intake = await createIntake(apiKey, { name: "same_values" });
    const on = await switchIntakeOn(deps, business.id, intake.id);
    const before = await rowOf(intake.id);
    const response = await patchIntake(apiKey, intake.id, on);
    await expect(response).toHaveStatus(200);
    expect(await json(response)).toEqual(on);
    expect(await rowOf(intake.id)).toEqual(before);
    // Also with enabled: true sent back, which is its value now.
    expect(await json(await patchIntake(apiKey, intake.id, { enabled: true, title: on.title }))).toEqual(on);
    await db.delete(intakes).where(eq(intakes.id, intake.id));
  });

  it("true → key revoked → false", async () => {
    const { business: shop, apiKey: key } = await createBusiness();
    const intake = await createIntake(key);
    await switchIntakeOn(deps, shop.id, intake.id);
    const { apiKeyId } = await apiKeyPrincipal(key);
    await revokeApiKey(deps, shop.id, apiKeyId);
    expect(await rowOf(intake.id)).toMatchObject({ enabled: false, approvedVersion: 1 });
  });
});

describe("revokeApiKey", () => {
  it("revokes the key (401 from then on) and switches its intakes off in one batch, leaving another key's alone", async () => {
    const { business, apiKey } = await createBusiness();
    const other = await createApiKey(business.id);
    const mine = [await createIntake(apiKey), await createIntake(apiKey), await createIntake(apiKey)];
    const theirs = await createIntake(other.apiKey);
    for (const intake of [mine[0], mine[1], theirs]) await switchIntakeOn(deps, business.id, intake?.id ?? 0);
    const { apiKeyId } = await apiKeyPrincipal(apiKey);

    const result = await revokeApiKey(deps, business.id, apiKeyId);
    expect(result).toEqual({
      id: apiKeyId,
      revokedAt: expect.any(String),
      intakesSwitchedOff: 2,
      actionsSwitchedOff: 0,
      endpointsDeleted: 0,
    });

    await expectError(await call("/api/v1/intakes", { key: apiKey }), 401, "The API key has been revoked.", {
      code: "invalid_credential",
      param: undefined,
    });
    for (const intake of mine) expect((await rowOf(intake.id))?.enabled).toBe(false);
    expect((await rowOf(theirs.id))?.enabled).toBe(true);
    await expect(await call("/api/v1/intakes", { key: other.apiKey })).toHaveStatus(200);

    // Idempotent: the first revocation time stays, nothing else changes.
    expect(await revokeApiKey(deps, business.id, apiKeyId)).toEqual({ ...result, intakesSwitchedOff: 0 });
    const key = await db.select().from(apiKeys).where(eq(apiKeys.id, apiKeyId)).get();
    expect(key?.revokedAt).toBe(result.revokedAt);
  });

  it("answers 404 for a key of another business, and revokes and switches off nothing", async () => {
    const { business, apiKey } = await createBusiness();
    const intake = await createIntake(apiKey);
    await switchIntakeOn(deps, business.id, intake.id);
    const { apiKeyId } = await apiKeyPrincipal(apiKey);
    const stranger = await createBusiness();
    await expectApiError(revokeApiKey(deps, stranger.business.id, apiKeyId), 404, /No API key with that id/);
    // An id that is not a number is refused at the edge with the same 404 (lib/validation.ts, idOrNotFound).
    await expectApiError(
      (async () => revokeApiKey(deps, business.id, idOrNotFound("abc", apiKeyNotFound)))(),
      404,
      /No API key with that id/,
    );
    await expectApiError(revokeApiKey(deps, business.id, 987_654_321), 404);
    await expect(await call("/api/v1/intakes", { key: apiKey })).toHaveStatus(200);
    expect((await rowOf(intake.id))?.enabled).toBe(true);
  });

  it("leaves an intake of a revoked key unable to be switched on", async () => {
    const { business, apiKey } = await createBusiness();
    const intake = await createIntake(apiKey);
    const { apiKeyId } = await apiKeyPrincipal(apiKey);
    await revokeApiKey(deps, business.id, apiKeyId);
    await expectApiError(switchIntakeOn(deps, business.id, intake.id), 403, /revoked or disconnected/);
    expect((await rowOf(intake.id))?.enabled).toBe(false);
    expect((await approvalSummary(deps, business.id, intake.id)).registeredBy).toEqual({
      apiKeyId,
      oauthGrantId: null,
      revoked: true,
    });
  });
});

describe("the owner's switches and concurrent writes", () => {
  it("answers 404 for an intake of another business, or an id that is not one", async () => {
    const { apiKey } = await createBusiness();
    const intake = await createIntake(apiKey);
    const stranger = await createBusiness();
    for (const attempt of [
      () => switchIntakeOn(deps, stranger.business.id, intake.id),
      () => switchIntakeOff(deps, stranger.business.id, intake.id),
      () => approvalSummary(deps, stranger.business.id, intake.id),
      async () => switchIntakeOn(deps, stranger.business.id, idOrNotFound("abc", intakeNotFound)),
    ]) {
      await expectApiError(attempt(), 404, /No intake with that id/);
    }
  });

  it("refuses to approve a version the owner did not review (409), and approves the one they did", async () => {
    const { business, apiKey } = await createBusiness();
    const intake = await createIntake(apiKey);
    await patchIntake(apiKey, intake.id, { title: "A newer title" });
    await expectApiError(
      switchIntakeOn(deps, business.id, intake.id, { version: 1 }),
      409,
      /changed since it was reviewed/,
    );
    expect((await rowOf(intake.id))?.enabled).toBe(false);
    expect((await switchIntakeOn(deps, business.id, intake.id, { version: 2 })).enabled).toBe(true);
  });

  it("does not switch on a version that a PATCH stored between the owner's read and the write", async () => {
    const { business, apiKey } = await createBusiness();
    const intake = await createIntake(apiKey);
    const racing = shardDatabase(interferingD1(() => patchIntake(apiKey, intake.id, { title: "Changed meanwhile" })));
    await expectApiError(
      switchIntakeOn(testDependencies(DEFAULT_SHARD, { db: racing }), business.id, intake.id),
      409,
      /changed since it was reviewed/,
    );
    expect(await rowOf(intake.id)).toMatchObject({
      enabled: false,
      version: 2,
      title: "Changed meanwhile",
      approvedVersion: null,
    });
  });

  it("does not switch on an intake whose key was revoked between the owner's read and the write", async () => {
    const { business, apiKey } = await createBusiness();
    const intake = await createIntake(apiKey);
    const { apiKeyId } = await apiKeyPrincipal(apiKey);
    const racing = shardDatabase(interferingD1(() => revokeApiKey(deps, business.id, apiKeyId)));
    await expectApiError(
      switchIntakeOn(testDependencies(DEFAULT_SHARD, { db: racing }), business.id, intake.id),
      403,
      /revoked/,
    );
    expect((await rowOf(intake.id))?.enabled).toBe(false);
  });

  it("makes a PATCH that lost a race compare again with what the other one stored", async () => {
    const { business, apiKey } = await createBusiness();
    const intake = await createIntake(apiKey);
    const principal = await authenticatePartner(deps, `Bearer ${apiKey}`);
    const racing = shardDatabase(interferingD1(() => patchIntake(apiKey, intake.id, { title: "First writer" })));
    const result = await patchIntakeDirectly(testDependencies(DEFAULT_SHARD, { db: racing }), principal, intake.id, {
      description: `${intake.description}!`,
    });
    expect(result).toMatchObject({ title: "First writer", description: `${intake.description}!`, enabled: false });
    expect((await rowOf(intake.id))?.version).toBe(3);
    // The owner's switch-on in between is overtaken by the PATCH too: the intake ends off.
    await switchIntakeOn(deps, business.id, intake.id);
    const afterApproval = shardDatabase(interferingD1(() => switchIntakeOn(deps, business.id, intake.id)));
    const patched = await patchIntakeDirectly(
      testDependencies(DEFAULT_SHARD, { db: afterApproval }),
      principal,
      intake.id,
      {
        title: "Second change",
      },
    );
    expect(patched.enabled).toBe(false);
    expect(await rowOf(intake.id)).toMatchObject({ enabled: false, version: 4, approvedVersion: 3 });
  });
});

describe("the approval summary: every question, the contact details and the identity questions", () => {
  it("lists them for the owner", async () => {
    const { business, apiKey } = await createBusiness();
    const intake = await createIntake(apiKey, {
      fields: [
        { id: "full_name", label: "What is your name?", type: "text", required: true },
        { id: "email", label: "Email?", type: "email", required: true },
        { id: "mobile", label: "Which number can we text?", type: "phone" },
        { id: "street", label: "Where should we deliver?", type: "text" },
        { id: "dob", label: "When were you born?", type: "date" },
        { id: "budget", label: "Budget?", type: "select", options: ["Low", "High"], help: "Roughly" },
      ],
    });
    const summary = await approvalSummary(deps, business.id, intake.id);
    expect(summary).toEqual({
      intake: (await json(await getIntake(apiKey, intake.id))) as Intake,
      version: 1,
      approvedVersion: null,
      registeredBy: { apiKeyId: expect.any(Number), oauthGrantId: null, revoked: false },
      questions: intake.fields,
      contactDetails: [
        { id: "email", label: "Email?", kind: "email", required: true, detectedBy: "type" },
        { id: "mobile", label: "Which number can we text?", kind: "phone", required: false, detectedBy: "type" },
      ],
      identityQuestions: [
        { id: "full_name", label: "What is your name?", asks: ["full_name"] },
        { id: "street", label: "Where should we deliver?", asks: ["home_address"] },
        { id: "dob", label: "When were you born?", asks: ["date_of_birth"] },
      ],
      changes: null,
    });
  });

  const field = (id: string, label: string, type: IntakeField["type"] = "text"): IntakeField => ({
    id,
    label,
    type,
    required: false,
  });

  it.each([
    // Full name
    [field("name", "Name"), ["full_name"]],
    [field("q1", "Name (as on your passport)"), ["full_name"]],
    [field("q1", "What's your name?"), ["full_name"]],
    [field("first_name", "First"), ["full_name"]],
    [field("q1", "Last name"), ["full_name"]],
    [field("q1", "Surname"), ["full_name"]],
    [field("q1", "Customer's full name"), ["full_name"]],
    [field("contact_name", "Who should we ask for?"), ["full_name"]],
    [field("company_name", "Company name"), []],
    [field("q1", "Your pet's name"), []],
    [field("q1", "Name of your company"), []],
    [field("username", "Username"), []],
    // Home address
    [field("address", "Address"), ["home_address"]],
    [field("q1", "Home address"), ["home_address"]],
    [field("q1", "Street and house number"), ["home_address"]],
    [field("q1", "Postcode"), ["home_address"]],
    [field("zip", "ZIP"), ["home_address"]],
    [field("q1", "Which city do you live in?"), ["home_address"]],
    [field("q1", "Where do you live?", "textarea"), ["home_address"]],
    [field("q1", "Your email address"), []],
    [field("q1", "E-mail address"), []],
    [field("q1", "Website address"), []],
    [field("address", "Address", "select"), []],
    // Date of birth
    [field("dob", "DOB", "date"), ["date_of_birth"]],
    [field("q1", "Date of birth", "date"), ["date_of_birth"]],
    [field("q1", "Geburtsdatum / birth date", "text"), ["date_of_birth"]],
    [field("birthday", "When is it?", "date"), ["date_of_birth"]],
    [field("q1", "Year of birth", "number"), ["date_of_birth"]],
    [field("q1", "When were you born?", "text"), ["date_of_birth"]],
    [field("q1", "Preferred date", "date"), []],
    [field("birth_email", "Email", "email"), []],
    // Several at once
    [field("q1", "Name and address", "textarea"), ["full_name", "home_address"]],
  ] as Array<[IntakeField, string[]]>)("identity: %j asks %j", (question, asks) => {
    const found = identityQuestionsOf([question]);
    expect(found).toEqual(asks.length === 0 ? [] : [{ id: question.id, label: question.label, asks }]);
  });

  it.each([
    [field("email", "Email", "email"), { kind: "email", detectedBy: "type" }],
    [field("tel", "Phone", "phone"), { kind: "phone", detectedBy: "type" }],
    [field("q1", "Your e-mail address"), { kind: "email", detectedBy: "wording" }],
    [field("contact_email", "Where do we reply?", "textarea"), { kind: "email", detectedBy: "wording" }],
    [field("q1", "Mobile phone number"), { kind: "phone", detectedBy: "wording" }],
    [field("q1", "WhatsApp"), { kind: "phone", detectedBy: "wording" }],
    [field("q1", "Budget"), undefined],
    [field("q1", "Phone model", "select"), undefined],
  ] as Array<[IntakeField, { kind: string; detectedBy: string } | undefined]>)(
    "contact details: %j is %j",
    (question, expected) => {
      const found = contactDetailsOf([question]);
      expect(found).toEqual(expected ? [{ id: question.id, label: question.label, required: false, ...expected }] : []);
    },
  );
});

describe("the change list against the approved version", () => {
  const q = (id: string, extra: Partial<IntakeField> = {}): IntakeField => ({
    id,
    label: `${id}?`,
    type: "text",
    required: false,
    ...extra,
  });
  const content = (fields: IntakeField[], title = "Title", description = "A description of twenty.") => ({
    title,
    description,
    fields,
  });
  const changes = (before: IntakeField[], after: IntakeField[]) =>
    changeList(content(before), content(after), 1).questions;

  it("is empty for the same content", () => {
    expect(changeList(content([q("a"), q("b")]), content([q("a"), q("b")]), 3)).toEqual({
      sinceVersion: 3,
      title: null,
      description: null,
      questions: [],
    });
  });

  it("names a changed title and description with before and after", () => {
    const list = changeList(content([q("a")]), content([q("a")], "New title", "A new description here."), 1);
    expect(list.title).toEqual({ before: "Title", after: "New title" });
    expect(list.description).toEqual({ before: "A description of twenty.", after: "A new description here." });
  });

  it("names a question added at the top, and does not call the others moved", () => {
    expect(changes([q("a"), q("b")], [q("new"), q("a"), q("b")])).toEqual([
      { change: "added", id: "new", index: 0, question: q("new") },
    ]);
  });

  it("names a question removed from the middle, with its old place", () => {
    expect(changes([q("a"), q("b"), q("c")], [q("a"), q("c")])).toEqual([
      { change: "removed", id: "b", index: 1, question: q("b") },
    ]);
  });

  it("names the one question moved, not every question whose index shifted", () => {
    expect(changes([q("a"), q("b"), q("c"), q("d")], [q("d"), q("a"), q("b"), q("c")])).toEqual([
      { change: "moved", id: "d", from: 3, to: 0 },
    ]);
    expect(changes([q("a"), q("b")], [q("b"), q("a")])).toEqual([{ change: "moved", id: "a", from: 0, to: 1 }]);
  });

  it("names every changed property with its value before and after", () => {
    const before = [q("a", { options: undefined }), q("b", { help: "Old hint" })];
    const after = [
      q("a", { label: "A, really?", type: "select", options: ["x", "y"], required: true }),
      q("b", { help: undefined }),
    ];
    expect(changes(before, after)).toEqual([
      {
        change: "changed",
        id: "a",
        index: 0,
        properties: [
          { property: "label", before: "a?", after: "A, really?" },
          { property: "type", before: "text", after: "select" },
          { property: "required", before: false, after: true },
          { property: "options", before: null, after: ["x", "y"] },
        ],
      },
      { change: "changed", id: "b", index: 1, properties: [{ property: "help", before: "Old hint", after: null }] },
    ]);
  });

  it("treats a question whose id changed as one removed and one added", () => {
    expect(changes([q("a")], [q("b")])).toEqual([
      { change: "added", id: "b", index: 0, question: q("b") },
      { change: "removed", id: "a", index: 0, question: q("a") },
    ]);
  });
});
