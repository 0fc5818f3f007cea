import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { exports } from "cloudflare:workers";
import { and, eq } from "drizzle-orm";
import { describe, expect, it, vi } from "vitest";
import { events, intakeResponses } from "../../src/db/schema";
import { completeRun } from "../../src/domain/intakes/completion";
import { switchIntakeOff, switchIntakeOn } from "../../src/domain/intakes/owner-decisions";
import type { IntakeConversation } from "../../src/durable-objects/intake-conversation";
import { conversationObject } from "../../src/durable-objects/jurisdictions";
import { deps } from "../helpers/dependencies";
import { createApiKey, createBusiness, DEFAULT_SHARD, db } from "../helpers/fixtures";
import { call, json, RUNTIME } from "../helpers/http";
import { conversationPath, createIntake, getResponses, patchIntake, runtimeIntake } from "../helpers/intakes";
import { receiverBox } from "../helpers/receiver";
import { subscribe } from "../helpers/webhooks";

type State = {
  skipped?: string[];
  status: string;
  answers: Array<{ id: string; label: string; type: string; value: string; proof?: string }>;
  next_question: { id: string } | null;
  response_id: number | null;
  reply?: string | null;
  rejected?: Array<{ id: string; reason: string }>;
};

const FIELDS = [
  { id: "full_name", label: "What is your name?", type: "text", required: true },
  { id: "phone", label: "Which number can we call?", type: "phone", required: true },
  { id: "moving_date", label: "When do you move?", type: "date", required: true },
  { id: "rooms", label: "How many rooms?", type: "number" },
  { id: "size", label: "Which van?", type: "select", options: ["Small", "Large"] },
];

let conversations = 0;
const newConversation = () => `conv-${++conversations}-${crypto.randomUUID()}`;

// The runtime's calls name the business of the conversation in the path: the one the conversation started with here
// (a conversation never started is with a business nobody knows).
const businessOfConversation = new Map<string, string>();
const runtimeOf = (cid: string) => runtimeIntake({ id: businessOfConversation.get(cid) ?? crypto.randomUUID() });
const start = (cid: string, { business_id, ...body }: Record<string, unknown>) => {
  businessOfConversation.set(cid, String(business_id));
  return runtimeOf(cid).start(cid, body);
};
const answer = (cid: string, answers: Record<string, string>) => runtimeOf(cid).answer(cid, answers);
const decline = (cid: string) => runtimeOf(cid).decline(cid);
const state = (cid: string) => runtimeOf(cid).state(cid);

describe("an intake conversation through the HTTP mirror", async () => {
  const { business, apiKey } = await createBusiness({ name: "Van Go Movers" });
  const box = receiverBox("intake");
  await subscribe(apiKey, box.url("/intakes"), ["intake.completed"]);
  const intake = await createIntake(apiKey, { fields: FIELDS });
  await switchIntakeOn(deps, business.id, intake.id);
  const begin = (cid: string, channel = "whatsapp", customer: Record<string, string> = { phone: "+31 6 12345678" }) =>
    start(cid, { business_id: business.id, intake_id: intake.id, channel, customer });

  it("opens with the questions it will ask and who gets the answers, then asks them in the order of fields", async () => {
    const cid = newConversation();
    const response = await begin(cid);
    await expect(response).toHaveStatus(201);
    const body = await json<State>(response);
    expect(body.reply).toBe(
      'I\'d like to ask you 5 questions: "What is your name?", "Which number can we call?", "When do you move?", ' +
        '"How many rooms?" and "Which van?". Your answers go to Van Go Movers.',
    );
    expect(body).toMatchObject({ status: "started", next_question: { id: "full_name", label: "What is your name?" } });
    const afterName = await json<State>(await answer(cid, { full_name: "Mo Ali" }));
    expect(afterName.next_question?.id).toBe("phone");
    const afterPhone = await json<State>(await answer(cid, { phone: "+31612345678" }));
    expect(afterPhone).toMatchObject({ status: "started", next_question: { id: "moving_date" } });
  });

  it("completes: stores the response, delivers intake.completed to the owner, thanks the customer", async () => {
    const cid = newConversation();
    await begin(cid);
    await answer(cid, { full_name: "Mo Ali", phone: "06 12345678" });
    // The call that leaves every required question answered completes the run, with the optional answer it carries.
    const done = await json<State>(
      await answer(cid, { phone: "+31 6 1234 5678", moving_date: "2026-12-24", rooms: "3" }),
    );
    expect(done.rejected).toEqual([]);
    expect(done.status).toBe("completed");
    expect(done.reply).toBe("Thank you! Your answers have been sent to Van Go Movers.");
    const expectedAnswers = [
      { id: "full_name", label: "What is your name?", type: "text", value: "Mo Ali" },
      { id: "phone", label: "Which number can we call?", type: "phone", value: "+31612345678", proof: "verified" },
      { id: "moving_date", label: "When do you move?", type: "date", value: "2026-12-24" },
      { id: "rooms", label: "How many rooms?", type: "number", value: "3" },
    ];
    expect(done.answers).toEqual(expectedAnswers);

    const page = await json<{ data: Array<{ id: number; answers: unknown; conversation: unknown }> }>(
      await getResponses(apiKey, intake.id),
    );
    const stored = page.data.find((response) => response.id === done.response_id);
    expect(stored).toMatchObject({ answers: expectedAnswers, conversation: { id: cid, channel: "whatsapp" } });

    const [delivered] = await vi.waitFor(
      async () => {
        const recorded = (await box.recorded()).filter((r) => JSON.parse(r.body).data.conversation.id === cid);
        if (recorded.length === 0) throw new Error("not delivered yet");
        return recorded;
      },
      { timeout: 10_000, interval: 100 },
    );
    const envelope = JSON.parse(delivered?.body ?? "{}");
    expect(envelope.event).toBe("intake.completed");
    expect(envelope.data).toEqual({
      intake: { id: intake.id, name: intake.name, title: "Quote request" },
      response_id: done.response_id,
      conversation: { id: cid, channel: "whatsapp" },
      answers: expectedAnswers,
      completed_at: expect.any(String),
    });
    // A repeated completion call answers the same and sends nothing more.
    const again = await json<State>(await answer(cid, { size: "Small" }));
    expect(again).toMatchObject({ status: "completed", response_id: done.response_id });
    const rows = await db.select().from(intakeResponses).where(eq(intakeResponses.conversationId, cid));
    expect(rows).toHaveLength(1);
  });

  it("skips an optional question answered with nothing, and keeps the latest answer to a question", async () => {
    const cid = newConversation();
    await begin(cid, "sms", { phone: "+31699999999" });
    const first = await json<State>(await answer(cid, { full_name: "First try", rooms: "" }));
    expect(first).toMatchObject({ status: "started", skipped: ["rooms"], next_question: { id: "phone" } });
    const done = await json<State>(
      await answer(cid, { full_name: "Mo Ali", phone: "+31612345678", moving_date: "1 March 2027" }),
    );
    expect(done.status).toBe("completed");
    expect(done.answers).toEqual([
      { id: "full_name", label: "What is your name?", type: "text", value: "Mo Ali" },
      { id: "phone", label: "Which number can we call?", type: "phone", value: "+31612345678", proof: "stated" },
      { id: "moving_date", label: "When do you move?", type: "date", value: "2027-03-01" },
    ]);
  });

  it("rejects answers that do not fit, with a reason, and keeps the rest", async () => {
    const cid = newConversation();
    await begin(cid);
    const body = await json<State>(
      await answer(cid, { full_name: "Mo", phone: "0612345678", moving_date: "31/02/2027", rooms: "many", nope: "x" }),
    );
    expect(body.rejected).toEqual([
      { id: "phone", reason: "The answer must be a phone number with its country code, such as +31 6 12345678." },
      { id: "moving_date", reason: "The answer must be a real date, such as 2026-12-24." },
      { id: "rooms", reason: "The answer must be a number." },
      { id: "nope", reason: "The intake has no question with this id." },
    ]);
    expect(body.answers.map((a) => a.id)).toEqual(["full_name"]);
    expect(body.next_question?.id).toBe("phone");
  });

  it("stops when the customer declines, and sends nothing", async () => {
    const cid = newConversation();
    await begin(cid);
    await answer(cid, { full_name: "Mo" });
    const stopped = await decline(cid);
    await expect(stopped).toHaveStatus(200);
    expect((await json<State>(stopped)).status).toBe("stopped");
    await expect(await answer(cid, { phone: "+31612345678" })).toHaveStatus(409);
    expect(await db.select().from(intakeResponses).where(eq(intakeResponses.conversationId, cid))).toEqual([]);
  });

  it("drops an intake left unfinished for 24 hours, by the object's alarm", async () => {
    const cid = newConversation();
    await begin(cid);
    const stub = conversationObject(env, { conversationId: cid, businessId: business.id, shard: DEFAULT_SHARD });
    const alarm = await runInDurableObject<IntakeConversation, number | null>(stub, (_i, s) => s.storage.getAlarm());
    expect(alarm).toBeGreaterThan(Date.now() + 23.9 * 3_600_000);
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect((await json<State>(await state(cid))).status).toBe("dropped");
    await expect(await answer(cid, { full_name: "Mo" })).toHaveStatus(409);
  });

  it("drops a run 24 hours old at its next answer when the alarm is late, and sends nothing", async () => {
    const cid = newConversation();
    const call = { conversationId: cid, businessId: business.id, shard: DEFAULT_SHARD };
    const stub = conversationObject(env, call);
    // In the future, so that the real alarm (set for 24 hours after the start) does not run during the test.
    const startedAt = Date.parse("2030-01-07T10:00:00.000Z");
    const body = { intake_id: intake.id, channel: "whatsapp" };
    expect(await stub.start(call, body, startedAt)).toMatchObject({ ok: true, value: { status: "started" } });
    const all = { full_name: "Mo Ali", phone: "+31612345678", moving_date: "2026-12-24" };
    // A second before the 24 hours: still running.
    expect(
      await stub.answer(call, { answers: { full_name: "Mo Ali" } }, startedAt + 24 * 3_600_000 - 1000),
    ).toMatchObject({
      ok: true,
      value: { status: "started" },
    });
    const late = await stub.answer(call, { answers: all }, startedAt + 24 * 3_600_000);
    expect(late).toMatchObject({
      ok: true,
      value: {
        status: "dropped",
        response_id: null,
        reply: expect.stringMatching(/^Sorry: this form was left unfinished/),
      },
    });
    expect(await db.select().from(intakeResponses).where(eq(intakeResponses.conversationId, cid))).toEqual([]);
    expect(await stub.start(call, body, startedAt + 24 * 3_600_000 + 1)).toMatchObject({ ok: true });
  });

  it("reads a run 24 hours old as dropped, even before its alarm", async () => {
    const cid = newConversation();
    const call = { conversationId: cid, businessId: business.id, shard: DEFAULT_SHARD };
    const stub = conversationObject(env, call);
    const startedAt = Date.parse("2030-01-07T10:00:00.000Z");
    await stub.start(call, { intake_id: intake.id, channel: "sms" }, startedAt);
    expect(await stub.state(call, startedAt + 24 * 3_600_000)).toMatchObject({
      ok: true,
      value: { status: "dropped" },
    });
  });

  it("runs one intake at a time per conversation, and a new one after the last ended", async () => {
    const cid = newConversation();
    await expect(await begin(cid)).toHaveStatus(201);
    const twice = await begin(cid);
    await expect(twice).toHaveStatus(409);
    expect((await json(twice)).error).toBe(`The intake "${intake.name}" is already running in this conversation.`);
    await decline(cid);
    await expect(await begin(cid)).toHaveStatus(201);
  });

  it.each(["phone", "mcp"])("refuses to start on the %s channel", async (channel) => {
    const response = await begin(newConversation(), channel);
    await expect(response).toHaveStatus(409);
    expect((await json(response)).error).toBe(
      "Intakes run only on chat channels: not on phone calls nor through connected AI assistants (MCP).",
    );
  });

  it.each(["chat_page", "website_widget", "whatsapp", "sms", "telegram", "instagram", "messenger", "email"])(
    "starts on the %s channel",
    async (channel) => {
      await expect(await begin(newConversation(), channel)).toHaveStatus(201);
    },
  );

  it("refuses an intake that is off, another business's intake, and bad input", async () => {
    const off = await createIntake(apiKey, { fields: FIELDS });
    const refused = await start(newConversation(), { business_id: business.id, intake_id: off.id, channel: "sms" });
    await expect(refused).toHaveStatus(409);
    const other = await createBusiness();
    const foreign = await start(newConversation(), {
      business_id: other.business.id,
      intake_id: intake.id,
      channel: "sms",
    });
    await expect(foreign).toHaveStatus(404);
    const bad = await start(newConversation(), { business_id: business.id, intake_id: "x", channel: "sms" });
    await expect(bad).toHaveStatus(400);
    expect((await json(bad)).error).toBe('The field "intake_id" must be a number.');
    await expect(
      await call(conversationPath(business.id, newConversation()), {
        headers: { Authorization: `Bearer ${apiKey}` },
      }),
    ).toHaveStatus(401);
    await expect(await state(newConversation())).toHaveStatus(404);
  });
});

describe("completion checks the intake before anything is sent", async () => {
  const { business, apiKey } = await createBusiness();
  const intake = await createIntake(apiKey, {
    fields: [{ id: "email", label: "Your email?", type: "email", required: true }],
  });
  await switchIntakeOn(deps, business.id, intake.id);
  const begin = (cid: string, channel = "email", customer = { email: "Ana@Example.com" }) =>
    start(cid, { business_id: business.id, intake_id: intake.id, channel, customer });

  it("marks an email answer verified when it is the address the customer writes from", async () => {
    const cid = newConversation();
    await begin(cid);
    const done = await json<State>(await answer(cid, { email: "ana@EXAMPLE.com" }));
    expect(done.answers).toEqual([
      { id: "email", label: "Your email?", type: "email", value: "ana@example.com", proof: "verified" },
    ]);
    const other = newConversation();
    await begin(other, "whatsapp", { email: "ana@example.com" });
    expect((await json<State>(await answer(other, { email: "ana@example.com" }))).answers[0]?.proof).toBe("stated");
  });

  it("sends nothing and apologises when the intake was changed (PATCH) after the conversation started", async () => {
    const cid = newConversation();
    await begin(cid);
    const patched = await patchIntake(apiKey, intake.id, { title: "Changed title" });
    await expect(patched).toHaveStatus(200);
    const done = await json<State>(await answer(cid, { email: "ana@example.com" }));
    expect(done).toMatchObject({ status: "no_delivery", response_id: null });
    expect(done.reply).toMatch(/^Sorry: this form changed or was switched off/);
    expect(await db.select().from(intakeResponses).where(eq(intakeResponses.conversationId, cid))).toEqual([]);
    await switchIntakeOn(deps, business.id, intake.id);
  });

  it("sends nothing and apologises when the owner switched the intake off meanwhile", async () => {
    const cid = newConversation();
    await begin(cid);
    await switchIntakeOff(deps, business.id, intake.id);
    const done = await json<State>(await answer(cid, { email: "ana@example.com" }));
    expect(done.status).toBe("no_delivery");
    await switchIntakeOn(deps, business.id, intake.id);
  });

  it("stores one response and emits one event when the same run completes concurrently", async () => {
    const run = {
      runId: `run_${crypto.randomUUID()}`,
      businessId: business.id,
      intakeId: intake.id,
      version: 0,
      conversation: { id: newConversation(), channel: "email" },
      answers: [
        { id: "email", label: "Your email?", type: "email" as const, value: "a@b.example", proof: "stated" as const },
      ],
      completedAt: new Date().toISOString(),
    };
    const stored = await db.query.intakes.findFirst({ where: (t, { eq: equals }) => equals(t.id, intake.id) });
    run.version = stored?.version ?? 0;
    const results = await Promise.all(Array.from({ length: 5 }, () => completeRun(deps, run)));
    const ids = new Set(results.map((result) => (result.sent ? result.responseId : null)));
    expect(ids.size).toBe(1);
    expect([...ids][0]).toBeTypeOf("number");
    expect(await db.select().from(intakeResponses).where(eq(intakeResponses.runId, run.runId))).toHaveLength(1);
    const emitted = (
      await db
        .select()
        .from(events)
        .where(and(eq(events.businessId, business.id), eq(events.type, "intake.completed")))
    ).filter((event) => JSON.parse(event.envelope).data.conversation.id === run.conversation.id);
    expect(emitted).toHaveLength(1);
    expect(JSON.parse(emitted[0]?.envelope ?? "{}").data.response_id).toBe([...ids][0]);
  });

  it("answers concurrent final answers of one conversation with one completion", async () => {
    const cid = newConversation();
    await begin(cid);
    const results = await Promise.all(
      [1, 2, 3].map(() => answer(cid, { email: "ana@example.com" }).then((r) => json<State>(r))),
    );
    expect(new Set(results.map((r) => r.response_id)).size).toBe(1);
    expect(results.every((r) => r.status === "completed")).toBe(true);
    expect(await db.select().from(intakeResponses).where(eq(intakeResponses.conversationId, cid))).toHaveLength(1);
  });
});

describe("order and completion with optional questions in between (docs/intakes.md, The conversation: order, completion and the 24 hours)", async () => {
  const { business, apiKey } = await createBusiness({ name: "Studio Noord" });
  const box = receiverBox("order");
  await subscribe(apiKey, box.url("/intakes"), ["intake.completed"]);
  const fields = [
    { id: "full_name", label: "What is your name?", type: "text", required: true },
    { id: "notes", label: "Anything we should know?", type: "textarea", required: false },
    { id: "city", label: "Which city?", type: "text", required: true },
  ];
  const intake = await createIntake(apiKey, { fields });
  await switchIntakeOn(deps, business.id, intake.id);
  const begin = (cid: string) => start(cid, { business_id: business.id, intake_id: intake.id, channel: "chat_page" });
  const deliveredAnswers = (cid: string) =>
    vi.waitFor(
      async () => {
        const [request] = (await box.recorded()).filter((r) => JSON.parse(r.body).data.conversation.id === cid);
        if (!request) throw new Error("not delivered yet");
        return JSON.parse(request.body).data.answers as Array<{ id: string; value: string }>;
      },
      { timeout: 10_000, interval: 100 },
    );

  it("completes when both required questions are answered in one call, with exactly those answers", async () => {
    const cid = newConversation();
    await begin(cid);
    const done = await json<State>(await answer(cid, { full_name: "Ana", city: "Utrecht" }));
    expect(done).toMatchObject({ status: "completed", next_question: null });
    const expected = [
      { id: "full_name", label: "What is your name?", type: "text", value: "Ana" },
      { id: "city", label: "Which city?", type: "text", value: "Utrecht" },
    ];
    expect(done.answers).toEqual(expected);
    expect(await deliveredAnswers(cid)).toEqual(expected);
  });

  it("asks the optional question where it stands, and carries its answer when given along the way", async () => {
    const cid = newConversation();
    await begin(cid);
    const afterName = await json<State>(await answer(cid, { full_name: "Ana" }));
    expect(afterName).toMatchObject({ status: "started", next_question: { id: "notes", required: false } });
    const afterNotes = await json<State>(await answer(cid, { notes: "Second floor, no lift" }));
    expect(afterNotes).toMatchObject({ status: "started", next_question: { id: "city" } });
    const done = await json<State>(await answer(cid, { city: "Utrecht" }));
    expect(done.status).toBe("completed");
    expect((await deliveredAnswers(cid)).map((answer) => [answer.id, answer.value])).toEqual([
      ["full_name", "Ana"],
      ["notes", "Second floor, no lift"],
      ["city", "Utrecht"],
    ]);
  });

  it("names the topics instead of the questions when the questions are long", async () => {
    // Four questions of 70 characters: together longer than an opening line should be.
    const long = (topic: string) =>
      `${topic}: please tell us everything you can about it, in your own words.`.padEnd(70, ".");
    const wordy = await createIntake(apiKey, {
      fields: [
        { id: "moving_date", label: long("When"), type: "date", required: true },
        { id: "rooms", label: long("Rooms"), type: "number", required: false },
        { id: "van_size", label: long("Van"), type: "text", required: false },
        { id: "floor", label: long("Floor"), type: "text", required: false },
      ],
    });
    await switchIntakeOn(deps, business.id, wordy.id);
    const started = await start(newConversation(), { business_id: business.id, intake_id: wordy.id, channel: "sms" });
    expect((await json<State>(started)).reply).toBe(
      "I'd like to ask you about moving date, rooms, van size and floor. Your answers go to Studio Noord.",
    );
  });
});

describe("the same conversation through RPC", async () => {
  const { business, apiKey } = await createBusiness();
  const intake = await createIntake(apiKey, {
    fields: [{ id: "city", label: "Which city?", type: "text", required: true }],
  });
  await switchIntakeOn(deps, business.id, intake.id);

  it("starts, answers, completes and reads the state", async () => {
    const cid = newConversation();
    const runtime = exports.RuntimeApi;
    const started = await runtime.startIntake(business.id, cid, { intake_id: intake.id, channel: "telegram" });
    expect(started).toMatchObject({ ok: true, value: { status: "started", next_question: { id: "city" } } });
    const done = await runtime.answerIntake(business.id, cid, { answers: { city: "Utrecht" } });
    expect(done).toMatchObject({ ok: true, value: { status: "completed" } });
    expect(await runtime.intakeState(business.id, cid)).toMatchObject({ ok: true, value: { status: "completed" } });
    expect(await runtime.declineIntake(business.id, cid)).toEqual({
      ok: false,
      status: 409,
      code: "invalid_state",
      error: "No intake is running in this conversation.",
    });
    expect(await runtime.startIntake(business.id, cid, { intake_id: intake.id, channel: "phone" })).toMatchObject({
      ok: false,
      status: 409,
    });
    expect(await runtime.answerIntake(business.id, newConversation(), { answers: [] })).toMatchObject({
      ok: false,
      status: 400,
    });
  });
});

describe("the context endpoint", async () => {
  const { business, apiKey } = await createBusiness();
  const on = await createIntake(apiKey, {
    fields: [{ id: "city", label: "Which city?", type: "text", required: true }],
  });
  await createIntake(apiKey);
  await switchIntakeOn(deps, business.id, on.id);
  const second = await createApiKey(business.id);
  const action = await json<{ id: number }>(
    await call("/api/v1/actions", {
      key: second.apiKey,
      method: "POST",
      body: {
        name: "stock",
        title: "Stock",
        description: "Tells whether a product is in stock.",
        url: "https://partner.example/s",
      },
    }),
  );
  await call("/api/v1/actions", {
    key: apiKey,
    method: "POST",
    body: {
      name: "off_one",
      title: "Off",
      description: "An action the owner did not switch on.",
      url: "https://partner.example/o",
    },
  });
  const { switchAction } = await import("../../src/domain/actions/owner-decisions");
  await switchAction(deps, business.id, action.id, true);
  const context = (channel: string) =>
    call(`/internal/v1/businesses/${business.id}/context?channel=${channel}`, { headers: RUNTIME }).then((r) =>
      json<{
        actions: Array<{ name: string }>;
        intakes: Array<{ id: number }>;
        knowledge: { sections: unknown[] };
        business: { id: string };
      }>(r),
    );

  it("gives enabled intakes and actions on a chat channel, with the knowledge", async () => {
    const body = await context("whatsapp");
    expect(body.business.id).toBe(business.id);
    expect(body.intakes.map((i) => i.id)).toEqual([on.id]);
    expect(body.actions.map((a) => a.name)).toEqual(["stock"]);
    expect(body.knowledge.sections.length).toBeGreaterThanOrEqual(1);
  });

  it("gives actions but no intakes through MCP, and neither on a phone call", async () => {
    const mcp = await context("mcp");
    expect(mcp.intakes).toEqual([]);
    expect(mcp.actions.map((a) => a.name)).toEqual(["stock"]);
    const phone = await context("phone");
    expect(phone.intakes).toEqual([]);
    expect(phone.actions).toEqual([]);
  });

  it("is the same through RPC, and refuses an unknown channel or business", async () => {
    expect(await exports.RuntimeApi.context(business.id, "sms")).toMatchObject({ ok: true, value: { channel: "sms" } });
    expect(await exports.RuntimeApi.context(business.id, "fax")).toMatchObject({ ok: false, status: 400 });
    const unknown = await call(`/internal/v1/businesses/${crypto.randomUUID()}/context?channel=sms`, {
      headers: RUNTIME,
    });
    await expect(unknown).toHaveStatus(404);
  });
});
