import { z } from "@hono/zod-openapi";
import { ACTION_CALL_STATUSES } from "../db/schema";
import { characterCount } from "../lib/text";
import { isNotDataName, notDataNameRule, recordId, timestamp, visibleText } from "../lib/validation";

/** At most 8 parameters, flat, of four types (docs/guides/connected-actions.md, Registering an action). */
export const MAX_PARAMETERS = 8;
const PARAMETER_TYPES = ["string", "number", "integer", "boolean"] as const;

/**
 * One parameter: flat, so a definition with `properties` or `items` (nesting) is refused, as is a name every object
 * inherits (`__proto__`), checked on the object as sent; its other unknown keys are ignored, as every body's are
 * (docs/guides/errors.md, Unknown members).
 */
const ParameterDefinition = z.preprocess(
  (definition, ctx) => {
    if (typeof definition !== "object" || definition === null) return definition;
    for (const key of Object.keys(definition)) {
      const rule = ["properties", "items"].includes(key)
        ? "nests parameters, and parameters are flat"
        : isNotDataName(key) && `is ${NOT_DATA}`;
      if (rule) ctx.addIssue({ code: "custom", path: [key], message: rule, input: definition });
    }
    return definition;
  },
  z
    .object({
      type: z.enum(PARAMETER_TYPES),
      description: z
        .string()
        .min(1)
        .max(300)
        .superRefine(visibleText({ lines: true })),
      enum: z
        .array(z.union([z.string(), z.number(), z.boolean()]))
        .min(1)
        .max(50)
        .optional(),
    })
    .superRefine((definition, ctx) => {
      const fits = (value: unknown) =>
        definition.type === "string"
          ? typeof value === "string"
          : definition.type === "boolean"
            ? typeof value === "boolean"
            : typeof value === "number" && (definition.type === "number" || Number.isInteger(value));
      definition.enum?.forEach((value, index) => {
        if (!fits(value))
          ctx.addIssue({ code: "custom", path: ["enum", index], message: `must be of type ${definition.type}` });
      });
    }),
);

const NOT_DATA = notDataNameRule("a parameter");

/**
 * Parameter names are names of data: `constructor`, `toString`, `__proto__` and the like are refused, naming the
 * parameter (`isNotDataName`, the one list for every name of data; docs/security.md, "Partner text"). Checked on the
 * object as sent, before `z.record`, which skips a `__proto__` key without a word (it cannot be set on the object the
 * record builds): the parameter would vanish and the rest be stored as if the partner had not sent it.
 */
const ParameterNames = z.preprocess(
  (properties, ctx) => {
    if (typeof properties === "object" && properties !== null) {
      for (const name of Object.keys(properties).filter(isNotDataName)) {
        ctx.addIssue({ code: "custom", path: [name], message: `is ${NOT_DATA}`, input: properties });
      }
    }
    return properties;
  },
  z.record(
    z.string().regex(/^[A-Za-z][A-Za-z0-9_]{0,63}$/, {
      error: "names a parameter that is not 1 to 64 letters, digits or underscores starting with a letter",
    }),
    ParameterDefinition,
  ),
);

/** `parameters`: a flat object schema of at most 8 (docs/guides/connected-actions.md, Registering an action). */
export const ActionParameters = z
  .object({
    type: z.literal("object", { error: 'must be "object"' }),
    properties: ParameterNames,
    required: z.array(z.string()).default([]).openapi({ description: "Omitted means none" }),
  })
  .superRefine((parameters, ctx) => {
    if (Object.keys(parameters.properties).length > MAX_PARAMETERS) {
      ctx.addIssue({
        code: "custom",
        path: ["properties"],
        message: `must define at most ${MAX_PARAMETERS} parameters`,
      });
    }
    parameters.required.forEach((name, index) => {
      if (isNotDataName(name)) {
        ctx.addIssue({ code: "custom", path: ["required", index], message: `names "${name}", ${NOT_DATA}` });
      } else if (!Object.hasOwn(parameters.properties, name)) {
        ctx.addIssue({
          code: "custom",
          path: ["required", index],
          message: `names "${name}", which is not a parameter`,
        });
      } else if (parameters.required.indexOf(name) !== index) {
        ctx.addIssue({ code: "custom", path: ["required", index], message: `names "${name}" a second time` });
      }
    });
  })
  .openapi("ActionParameters", {
    example: {
      type: "object",
      properties: { date: { type: "string", description: "The day to check, YYYY-MM-DD" } },
      required: ["date"],
    },
  });

const Description = z
  .string()
  .trim()
  .refine((text) => characterCount(text) >= 20 && characterCount(text) <= 600, {
    error: "must be 20 to 600 characters long",
  })
  .superRefine(visibleText({ lines: true }))
  .openapi({ minLength: 20, maxLength: 600, description: "All the Secretary sees when deciding whether to call" });

/** Shown to the owner: one line, nothing hidden (docs/security.md, "Partner text"). */
const Title = z
  .string()
  .trim()
  .min(1)
  .max(80)
  .superRefine(visibleText({ lines: false }));

/**
 * The registration body (docs/guides/connected-actions.md, Registering an action): `name` 1 to 64 of `a-z 0-9 _`
 * starting with a letter, unique per business; `title` 1 to 80 characters. Other keys are ignored.
 */
export const CreateActionBody = z
  .object({
    name: z.string().regex(/^[a-z][a-z0-9_]{0,63}$/, {
      error: "must be 1 to 64 lower-case letters, digits or underscores, starting with a letter",
    }),
    title: Title,
    description: Description,
    url: z.string().trim().max(2048).openapi({ description: "A public https address" }),
    parameters: ActionParameters.optional().openapi({ description: "Omitted means no parameters" }),
  })
  .openapi("CreateAction");

/**
 * PATCH takes any of `title`, `description`, `parameters`, `url` (docs/guides/connected-actions.md, Changing an
 * action).
 */
export const PatchActionBody = z
  .object({
    title: Title.optional(),
    description: Description.optional(),
    url: z.string().trim().max(2048).optional(),
    parameters: ActionParameters.optional(),
  })
  .openapi("PatchAction");

/** The action, exactly these members (docs/guides/connected-actions.md, Registering an action). */
export const ActionObject = z
  .object({
    id: recordId,
    name: z.string(),
    title: z.string(),
    description: z.string(),
    url: z.string(),
    parameters: ActionParameters,
    enabled: z.boolean().openapi({ description: "Starts false; only the owner switches it on" }),
    changePending: z.boolean().openapi({
      description:
        "True while a change of `description` or `parameters` of a switched-on action waits for the owner: until the owner accepts it (`action.change_accepted`), the Secretary uses the version the owner approved",
    }),
    source: z.enum(["api_key", "oauth_app", "mcp_server"]).openapi({
      description: "Who registered it: an API key, an app, or an MCP server's listing (`mcpServerId`)",
    }),
    mcpServerId: recordId.nullable().openapi({ description: "The MCP server whose tool the action is, else null" }),
    failureCount: z.number().int(),
    lastCalledAt: timestamp.nullable(),
    lastSuccessAt: timestamp.nullable(),
    lastFailureAt: timestamp.nullable(),
    createdAt: timestamp,
    updatedAt: timestamp,
  })
  .openapi("Action");
export type ActionObject = z.infer<typeof ActionObject>;

export const CreatedActionObject = ActionObject.extend({
  secret: z.string().openapi({ description: "Shown once: it keys X-Service-Signature on every call" }),
}).openapi("CreatedAction");

/**
 * The Secretary's arguments of an action call (docs/decisions.md, Calls) exactly as sent: a plain object with every
 * own name kept. Not `z.record`, which skips a `__proto__` key without a word: `{"__proto__": …}` would arrive as
 * `{}` and be sent on as a call without it. Kept, that name is judged like any other by `argumentProblem` (names
 * checked with `Object.hasOwn`: docs/architecture.md, Everywhere), and the call is `rejected`.
 */
export const ActionArguments = z.custom<Record<string, unknown>>(
  (value) =>
    typeof value === "object" && value !== null && [Object.prototype, null].includes(Object.getPrototypeOf(value)),
  { error: "must be an object" },
);

/**
 * An action call as its history shows it (docs/guides/connected-actions.md, The call history): never `pending`, since
 * a call cut off mid-way is shown as an error after 30 s (docs/decisions.md, Calls).
 */
export const ActionCallObject = z
  .object({
    id: recordId,
    status: z.enum(ACTION_CALL_STATUSES).exclude(["pending"]),
    arguments: z.record(z.string(), z.unknown()),
    http_status: z.number().int().nullable(),
    error: z.string().nullable(),
    duration_ms: z.number().int().nullable(),
    created_at: timestamp,
  })
  .openapi("ActionCall");

export const ActionWithCallsObject = ActionObject.extend({ calls: z.array(ActionCallObject) }).openapi(
  "ActionWithCalls",
);
