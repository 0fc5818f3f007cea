import { describe, expect, it } from "vitest";
import { parseCommand, UsageError } from "../../cli/src/arguments";

// The command line of `secretary` (cli/src/arguments.ts): each command, flag and mistake as a partner types it.

const KEY = { SECRETARY_API_KEY: "sk_test_from-the-environment" };
const parse = (line: string, environment: Record<string, string> = KEY) =>
  parseCommand(line.split(" ").filter(Boolean), environment);
const refusal = (line: string, environment: Record<string, string> = KEY) => {
  try {
    parse(line, environment);
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return (error as Error).message;
  }
  throw new Error(`"${line}" was accepted`);
};

describe("secretary's command line", () => {
  it("reads listen with its flags, the key and address from the environment", () => {
    expect(
      parse("listen --forward-to http://localhost:3000/hooks --events booking.created,order.created --print-secret"),
    ).toEqual({
      command: "listen",
      api: { base: "http://localhost:8787", key: "sk_test_from-the-environment" },
      forwardTo: "http://localhost:3000/hooks",
      events: ["booking.created", "order.created"],
      printSecret: true,
      keepaliveMs: undefined,
    });
    expect(
      parse("listen --forward-to http://localhost:3000/hooks --keepalive 10", {
        SECRETARY_API_KEY: "sk_test_a",
        SECRETARY_API_BASE: "http://127.0.0.1:9000/",
      }),
    ).toMatchObject({
      api: { base: "http://127.0.0.1:9000", key: "sk_test_a" },
      printSecret: false,
      keepaliveMs: 10_000,
    });
  });

  it("reads listen --app with the app's credentials, from the environment or flags, and no key", () => {
    const app = { SECRETARY_CLIENT_ID: "client-from-env", SECRETARY_CLIENT_SECRET: "secret-from-env" };
    expect(parse("listen --app --forward-to http://localhost:3000/hooks", app)).toMatchObject({
      command: "listen",
      api: { base: "http://localhost:8787", key: "" },
      app: { clientId: "client-from-env", clientSecret: "secret-from-env", authMethod: "client_secret_basic" },
    });
    expect(
      parse(
        "listen --app --forward-to http://x --client-id flag-id --client-secret flag-secret --client-auth client_secret_post",
        app,
      ),
    ).toMatchObject({ app: { clientId: "flag-id", clientSecret: "flag-secret", authMethod: "client_secret_post" } });
  });

  it("lets flags win over the environment", () => {
    expect(parse("trigger booking.created --api-key sk_test_flag --api-base https://api.example/")).toEqual({
      command: "trigger",
      api: { base: "https://api.example", key: "sk_test_flag" },
      event: "booking.created",
    });
  });

  it("answers help for no command, help, --help and -h", () => {
    for (const line of ["", "help", "--help", "listen -h"]) expect(parse(line, {})).toEqual({ command: "help" });
  });

  it("refuses each mistake with a sentence", () => {
    expect(refusal("listen --forward-to http://x", {})).toBe("An API key is required: --api-key or SECRETARY_API_KEY.");
    expect(refusal("listen")).toBe("listen needs --forward-to <url>, where each delivery is POSTed.");
    expect(refusal("listen --forward-to not-a-url")).toBe("--forward-to is not a URL: not-a-url");
    for (const keepalive of ["0", "301", "soon"]) {
      expect(refusal(`listen --forward-to http://x --keepalive ${keepalive}`)).toBe(
        "--keepalive is a number of seconds above 0, at most 300.",
      );
    }
    expect(refusal("trigger")).toBe("trigger takes one event name, e.g. booking.created.");
    expect(refusal("trigger a b")).toBe("trigger takes one event name, e.g. booking.created.");
    expect(refusal("deploy")).toBe("Unknown command: deploy.");
    expect(refusal("listen --app --forward-to http://x --client-id only-the-id", {})).toBe(
      "listen --app needs the app's client id and secret: --client-id and --client-secret, or SECRETARY_CLIENT_ID and SECRETARY_CLIENT_SECRET.",
    );
    expect(refusal("listen --app --forward-to http://x --client-id a --client-secret b --client-auth none")).toBe(
      "--client-auth is client_secret_basic or client_secret_post.",
    );
    expect(refusal("trigger booking.created --app --client-id a --client-secret b")).toBe(
      "--app goes with listen only.",
    );
    expect(refusal("listen --forward-to http://x --colour")).toMatch(/--colour/);
    expect(refusal("listen --forward-to")).toMatch(/--forward-to/);
  });
});
