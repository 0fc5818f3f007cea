import { env } from "cloudflare:workers";
import type { Dependencies } from "../../src/dependencies";
import { dependenciesFromEnv } from "../../src/dependencies-from-env";

/**
 * The dependencies of a test's direct domain calls (src/dependencies.ts): the real bindings of the test's runtime,
 * each part replaceable (a racing database, a driven clock). The deliveries a call writes go to the queue at once.
 */
export function testDependencies(parts: Partial<Dependencies> = {}): Dependencies {
  return { ...dependenciesFromEnv(env, (work) => work), ...parts };
}

export const deps = testDependencies();
