import { describe, expect, it } from "vitest";
import { createBusiness } from "../helpers/fixtures";
import { call, json } from "../helpers/http";
import { deleteIntake, type Intake, intakeBody, patchIntake, postIntake } from "../helpers/intakes";
import { expectOAuthError, REDIRECT_URI, register } from "../helpers/oauth";

/*
 * docs/security.md, "Partner text": the texts a partner writes that an owner reads (app names, action titles and
 * descriptions, intake texts, knowledge titles, webhook endpoint descriptions) carry no invisible or
 * direction-changing character. Each is refused with a 400 naming the field and the code point; accented text,
 * right-to-left scripts and emoji (with their presentation selector, skin tones and joiners) are accepted.
 */

const code = (char: string) => `U+${(char.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, "0")}`;
const hidden = (field: string, char: string) =>
  `The field "${field}" contains an invisible or direction-changing character (${code(char)}); remove it.`;

/** Every character the rule names, each between two letters. */
const REFUSED = [
  ...["\u202A", "\u202B", "\u202C", "\u202D", "\u202E"],
  ...["\u2066", "\u2067", "\u2068", "\u2069", "\u200E", "\u200F", "\u061C"],
  ...["\u200B", "\u200C", "\u200D", "\u2060", "\u2061", "\u2062", "\u2063", "\u2064", "\uFEFF", "\u180E"],
  "\u00AD",
  ...["\u{E0001}", "\u{E0020}", "\u{E0041}", "\u{E007F}"],
  ...["\uFE00", "\uFE0E", "\uFE0F", "\u{E0100}"],
  ...["\u3164", "\u034F", "\uFFF9"],
];

/** Accented, right-to-left and Asian text, and emoji with FE0F, a skin tone, joiners and a keycap. */
const ACCEPTED = [
  "Café crème à Ærøskøbing, naïve Zoë",
  "Réservation ❤️ rapide",
  "طلب عرض سعر",
  "בקשת הצעת מחיר",
  "見積もり依頼 ☎️",
  "Team 👩🏽\u200D💻 and 🏳️\u200D🌈 welcome",
  "Step 1️⃣ of ✌︎",
];

const EMOJI_WITH_FE0F = "Tables ❤️ and ☕️";

/**
 * The answer refusing a text (docs/errors.md): 400 `parameter_invalid` with `param` naming the member, and on an
 * intake `field` too (docs/intakes.md).
 */
const refusal = (response: Response, sentence: string, param: string, { intake = false } = {}) => ({
  status: 400,
  body: {
    error: sentence,
    code: "parameter_invalid",
    param,
    ...(intake ? { field: param } : {}),
    request_id: response.headers.get("X-Request-Id"),
  },
});

describe("the characters (on an intake title, POST /api/v1/intakes)", async () => {
  const { apiKey } = await createBusiness();
  const expectRefused = async (title: string, sentence: string) => {
    const response = await postIntake(apiKey, intakeBody({ title }));
    const body = await json(response);
    expect({ status: response.status, body }).toEqual(refusal(response, sentence, "title", { intake: true }));
  };

  it.each(REFUSED.map((char) => [code(char), char]))("refuses %s between two letters", async (_code, char) => {
    await expectRefused(`Quote${char}request`, hidden("title", char));
  });

  it.each([
    ["a variation selector after a letter", "Quote\uFE0F request", "\uFE0F"],
    ["two presentation selectors after one emoji", "Quote ❤\uFE0F\uFE0F", "\uFE0F"],
    ["a joiner between an emoji and a letter", "Quote 👩\u200Dx", "\u200D"],
    [
      "a tag sequence (the flag of England)",
      "Quote 🏴\u{E0067}\u{E0062}\u{E0065}\u{E006E}\u{E0067}\u{E007F}",
      "\u{E0067}",
    ],
  ])("refuses %s", async (_case, title, char) => {
    await expectRefused(title, hidden("title", char));
  });

  it.each([
    ["a line break", "Quote\nrequest", 'The field "title" must be one line: it contains a line break (U+000A).'],
    [
      "a line separator",
      "Quote\u2028request",
      'The field "title" must be one line: it contains a line break (U+2028).',
    ],
    ["a tab", "Quote\trequest", 'The field "title" contains a control character (U+0009); remove it.'],
    ["a bell", "Quote\u0007request", 'The field "title" contains a control character (U+0007); remove it.'],
    ["a C1 control", "Quote\u009Brequest", 'The field "title" contains a control character (U+009B); remove it.'],
  ])("refuses %s in one-line text", async (_case, title, sentence) => {
    await expectRefused(title, sentence);
  });

  it.each(ACCEPTED)("accepts %j, stored as sent", async (title) => {
    const response = await postIntake(apiKey, intakeBody({ title }));
    await expect(response).toHaveStatus(201);
    const created = await json<Intake>(response);
    expect(created.title).toBe(title);
    await expect(await deleteIntake(apiKey, created.id)).toHaveStatus(204);
  });

  it("keeps line breaks, CRLF and tabs in text of several lines (the description), refuses a lone CR there", async () => {
    const description = "When a customer asks for a quote.\r\nNot for repairs:\n\t- nor for existing orders.";
    const response = await postIntake(apiKey, intakeBody({ description }));
    await expect(response).toHaveStatus(201);
    const created = await json<Intake>(response);
    expect(created.description).toBe(description);
    await deleteIntake(apiKey, created.id);
    const lone = await postIntake(
      apiKey,
      intakeBody({ description: "When a customer asks.\rNot for repairs at all." }),
    );
    expect({ status: lone.status, body: await json(lone) }).toEqual(
      refusal(lone, 'The field "description" contains a control character (U+000D); remove it.', "description", {
        intake: true,
      }),
    );
  });
});

describe("every surface refuses one and accepts accents and emoji with FE0F", async () => {
  const { apiKey } = await createBusiness({ plan: "business" });

  it("the app name of an OAuth client registration: invalid_client_metadata (RFC 7591 §3.2.2)", async () => {
    const refused = await register({ client_name: "Pay\u202Emoc.lapyaP", redirect_uris: [REDIRECT_URI] });
    await expectOAuthError(refused, 400, "invalid_client_metadata");
    expect((await json(refused)).error_description).toBe(
      'The member "client_name" contains an invisible or direction-changing character (U+202E); remove it.',
    );
    const name = `Réservations ${EMOJI_WITH_FE0F}`;
    const accepted = await register({ client_name: name, redirect_uris: [REDIRECT_URI] });
    await expect(accepted).toHaveStatus(201);
    expect((await json(accepted)).client_name).toBe(name);
  });

  describe("actions (POST and PATCH /api/v1/actions)", () => {
    const DESCRIPTION = "Looks up free tables for a day, for customers who ask.";
    const action = (overrides: Record<string, unknown> = {}) => ({
      name: `tables_${crypto.randomUUID().slice(0, 8)}`,
      title: "Check tables",
      description: DESCRIPTION,
      url: "https://partner.example/tables",
      parameters: { type: "object", properties: { day: { type: "string", description: "The day, YYYY-MM-DD" } } },
      ...overrides,
    });
    const post = (body: unknown) => call("/api/v1/actions", { key: apiKey, method: "POST", body });
    const expect400 = async (response: Response, sentence: string, param: string) => {
      expect({ status: response.status, body: await json(response) }).toEqual(refusal(response, sentence, param));
    };

    it.each([
      ["title", { title: "Check\u200Btables" }, "title", "\u200B"],
      ["description", { description: `${DESCRIPTION}\u2067` }, "description", "\u2067"],
      [
        "a parameter's description",
        {
          parameters: {
            type: "object",
            properties: { day: { type: "string", description: "The day\u00AD, YYYY-MM-DD" } },
          },
        },
        "parameters.properties.day.description",
        "\u00AD",
      ],
    ])("refuses the %s", async (_case, overrides, field, char) => {
      await expect400(await post(action(overrides)), hidden(field, char), field);
    });

    it("accepts accents and emoji in each, and refuses a hidden character in a PATCH too", async () => {
      const texts = {
        title: `Réserver ${EMOJI_WITH_FE0F}`,
        description: `Cherche une table libre ❤️ pour un jour donné,\nà la demande du client.`,
      };
      const parameters = {
        type: "object",
        properties: { day: { type: "string", description: "Le jour ☀️, AAAA-MM-JJ" } },
        required: [],
      };
      const response = await post(action({ ...texts, parameters }));
      await expect(response).toHaveStatus(201);
      const created = await json<{ id: number; title: string; description: string; parameters: unknown }>(response);
      expect(created).toMatchObject({ ...texts, parameters });
      const patch = (body: unknown) => call(`/api/v1/actions/${created.id}`, { key: apiKey, method: "PATCH", body });
      await expect400(await patch({ title: "Réserver\u2066 vite" }), hidden("title", "\u2066"), "title");
      const patched = await patch({ title: "Réserver ☕️ vite" });
      await expect(patched).toHaveStatus(200);
      expect((await json(patched)).title).toBe("Réserver ☕️ vite");
    });
  });

  describe("intakes (POST and PATCH /api/v1/intakes)", () => {
    const field = (overrides: Record<string, unknown> = {}) => ({
      id: "q",
      label: "Question?",
      type: "text",
      required: true,
      ...overrides,
    });

    it.each([
      ["the title", { title: "Quote\u202Drequest" }, "title", "\u202D"],
      ["the description", { description: "When a customer asks for a quote\uFEFF." }, "description", "\uFEFF"],
      ["a label", { fields: [field({ label: "Your\u2060 name?" })] }, "fields[0].label", "\u2060"],
      ["a help", { fields: [field({ help: "As on your\u{E0020}passport" })] }, "fields[0].help", "\u{E0020}"],
      [
        "a choice",
        { fields: [field(), field({ id: "van", type: "select", options: ["Small", "Large\u200F"] })] },
        "fields[1].options[1]",
        "\u200F",
      ],
    ])("refuses %s with 400 naming it", async (_case, overrides, path, char) => {
      const response = await postIntake(apiKey, intakeBody(overrides));
      expect({ status: response.status, body: await json(response) }).toEqual(
        refusal(response, hidden(path, char), path, { intake: true }),
      );
    });

    it("accepts accents and emoji in each, and refuses a hidden character in a PATCH too", async () => {
      const texts = {
        title: `Devis ${EMOJI_WITH_FE0F}`,
        description: "Quand un client demande un devis ❤️ pour une rénovation.",
        fields: [
          { id: "nom", label: "Votre prénom ✍️ ?", type: "text", required: true, help: "Comme sur la carte 🪪" },
          {
            id: "taille",
            label: "Quelle camionnette ?",
            type: "select",
            required: false,
            options: ["Petite 🚐", "Grande 🚚"],
          },
        ],
      };
      const response = await postIntake(apiKey, intakeBody(texts));
      await expect(response).toHaveStatus(201);
      const created = await json<Intake>(response);
      expect(created).toMatchObject(texts);
      const refused = await patchIntake(apiKey, created.id, { title: "Devis\u2069 rapide" });
      expect({ status: refused.status, body: await json(refused) }).toEqual(
        refusal(refused, hidden("title", "\u2069"), "title", { intake: true }),
      );
      await expect(await patchIntake(apiKey, created.id, { title: "Devis ☀️ rapide" })).toHaveStatus(200);
      await deleteIntake(apiKey, created.id);
    });
  });

  it("a knowledge item's title (PUT /api/v1/knowledge/{key}); its content, read by the Secretary alone, is kept as sent", async () => {
    const content = "Open Monday to Friday, nine to five; soft\u00ADhyphens and zero\u200Bwidth spaces stay.";
    const push = (key: string, title: string) =>
      call(`/api/v1/knowledge/${key}`, { key: apiKey, method: "PUT", body: { title, content } });
    const refused = await push("hours", "Opening\u2063hours");
    expect({ status: refused.status, body: await json(refused) }).toEqual(
      refusal(refused, hidden("title", "\u2063"), "title"),
    );
    const accepted = await push("hours", `Heures d'ouverture ${EMOJI_WITH_FE0F}`);
    await expect(accepted).toHaveStatus(201);
    expect(await json(accepted)).toMatchObject({ title: `Heures d'ouverture ${EMOJI_WITH_FE0F}` });
  });

  it("a webhook endpoint's description (POST /api/v1/webhooks), which may have several lines", async () => {
    const post = (description: string) =>
      call("/api/v1/webhooks", {
        key: apiKey,
        method: "POST",
        body: { url: "https://partner.example/hooks/text", description },
      });
    const refused = await post("Bookings to the CRM\u180E");
    expect({ status: refused.status, body: await json(refused) }).toEqual(
      refusal(refused, hidden("description", "\u180E"), "description"),
    );
    const description = `Réservations vers le CRM ${EMOJI_WITH_FE0F}\nsecond line`;
    const accepted = await post(description);
    await expect(accepted).toHaveStatus(201);
    expect((await json(accepted)).description).toBe(description);
  });
});
