import { parseArgs } from "node:util";
import type { AppCredentials } from "@secretary/partner-sdk";

/*
 * The command line of `secretary` (docs/guides/webhooks.md, Listening from a laptop): a command, its flags, and where
 * the API is. The key and the base address come from flags or the environment, so that a key need not be typed
 * where a shell's history keeps it.
 */

const DEFAULT_API_BASE = "http://localhost:8787";

export const USAGE = `Usage:
  secretary listen --forward-to <url> [--events booking.created,order.created] [--print-secret]
                   [--keepalive <seconds>] [--app]
  secretary trigger <event>

Options:
  --api-base <url>   The API's address (env SECRETARY_API_BASE; default ${DEFAULT_API_BASE})
  --api-key <key>    Your API key (env SECRETARY_API_KEY); trigger takes a test key (sk_test_…)
  --app              listen: as your app, to every business connected to it, with the app's credentials instead
                     of a key: --client-id and --client-secret (env SECRETARY_CLIENT_ID, SECRETARY_CLIENT_SECRET),
                     and --client-auth client_secret_post if the app registered that method
  --print-secret     listen: print the session's webhook signing secret, to verify the forwarded deliveries
  --keepalive <s>    listen: how often the connection is checked, in seconds (default 30; shorter for a network
                     that closes quiet connections sooner)`;

export type Command =
  | {
      command: "listen";
      api: Api;
      app?: AppCredentials;
      forwardTo: string;
      events?: string[];
      printSecret: boolean;
      keepaliveMs?: number;
    }
  | { command: "trigger"; api: Api; event: string }
  | { command: "help" };

export type Api = { base: string; key: string };

/** A check rarer than every 5 minutes would not keep a connection open through common proxies. */
const MAX_KEEPALIVE_SECONDS = 300;

/** A mistake on the command line: its sentence is printed with the usage, and the exit status is 2. */
export class UsageError extends Error {}

export function parseCommand(argv: string[], environment: NodeJS.ProcessEnv): Command {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const { values, positionals } = parsed;
  const [command, ...rest] = positionals;
  if (values.help || command === undefined || command === "help") return { command: "help" };
  const api = {
    base: (values["api-base"] ?? environment.SECRETARY_API_BASE ?? DEFAULT_API_BASE).replace(/\/+$/, ""),
    key: values["api-key"] ?? environment.SECRETARY_API_KEY ?? "",
  };
  const app = values.app ? appCredentials(values, environment) : undefined;
  if (app && command !== "listen") throw new UsageError("--app goes with listen only.");
  if (!api.key && !app) throw new UsageError("An API key is required: --api-key or SECRETARY_API_KEY.");
  if (command === "listen") {
    const forwardTo = values["forward-to"];
    if (!forwardTo) throw new UsageError("listen needs --forward-to <url>, where each delivery is POSTed.");
    if (!URL.canParse(forwardTo)) throw new UsageError(`--forward-to is not a URL: ${forwardTo}`);
    const events = values.events
      ?.split(",")
      .map((event) => event.trim())
      .filter(Boolean);
    const keepalive = values.keepalive === undefined ? undefined : Number(values.keepalive);
    if (keepalive !== undefined && !(keepalive > 0 && keepalive <= MAX_KEEPALIVE_SECONDS)) {
      throw new UsageError(`--keepalive is a number of seconds above 0, at most ${MAX_KEEPALIVE_SECONDS}.`);
    }
    const printSecret = values["print-secret"] ?? false;
    return { command: "listen", api, app, forwardTo, events, printSecret, keepaliveMs: keepalive && keepalive * 1000 };
  }
  if (command === "trigger") {
    const [event] = rest;
    if (!event || rest.length > 1) throw new UsageError("trigger takes one event name, e.g. booking.created.");
    return { command: "trigger", api, event };
  }
  throw new UsageError(`Unknown command: ${command}.`);
}

const AUTH_METHODS = ["client_secret_basic", "client_secret_post"] as const;

/** The app's client credentials, for its own token (docs/guides/oauth.md, The app as itself). */
function appCredentials(values: ReturnType<typeof parse>["values"], environment: NodeJS.ProcessEnv): AppCredentials {
  const clientId = values["client-id"] ?? environment.SECRETARY_CLIENT_ID ?? "";
  const clientSecret = values["client-secret"] ?? environment.SECRETARY_CLIENT_SECRET ?? "";
  if (!clientId || !clientSecret) {
    throw new UsageError(
      "listen --app needs the app's client id and secret: --client-id and --client-secret, or SECRETARY_CLIENT_ID and SECRETARY_CLIENT_SECRET.",
    );
  }
  const authMethod = AUTH_METHODS.find((method) => method === (values["client-auth"] ?? AUTH_METHODS[0]));
  if (!authMethod) throw new UsageError(`--client-auth is ${AUTH_METHODS.join(" or ")}.`);
  return { clientId, clientSecret, authMethod };
}

const parse = (argv: string[]) =>
  parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      "forward-to": { type: "string" },
      events: { type: "string" },
      keepalive: { type: "string" },
      "print-secret": { type: "boolean" },
      "api-base": { type: "string" },
      "api-key": { type: "string" },
      app: { type: "boolean" },
      "client-id": { type: "string" },
      "client-secret": { type: "string" },
      "client-auth": { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
