#!/usr/bin/env node
import { parseCommand, USAGE, UsageError } from "./arguments.js";
import { listen } from "./listen.js";
import { trigger } from "./trigger.js";

/*
 * `npx secretary …` (package.json "bin"): webhooks on a laptop without a public URL (docs/guides/webhooks.md,
 * Listening from a laptop), built to dist/secretary.js by the package's build.
 */

async function main(): Promise<number> {
  let command: ReturnType<typeof parseCommand>;
  try {
    command = parseCommand(process.argv.slice(2), process.env);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    console.error(`${error.message}\n\n${USAGE}`);
    return 2;
  }
  switch (command.command) {
    case "help":
      console.log(USAGE);
      return 0;
    case "listen":
      return listen(command);
    case "trigger":
      return trigger(command.api, command.event);
  }
}

main().then(
  (status) => {
    process.exitCode = status;
  },
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : String(error));
    process.exitCode = 1;
  },
);
