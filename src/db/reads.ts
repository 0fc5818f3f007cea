import type { ShardDatabase } from "./client";
import { type Bound, runStatements } from "./statements";

/**
 * A read as data: its statements, and how their rows become the answer. A read is built apart from its execution so
 * that a partner read goes in one D1 batch with the credential's lookup, one round trip (docs/architecture.md,
 * Performance budget); `answer` may throw (a 404), and is called only once the credential is accepted.
 */
export type Read<T> = { statements: Bound<unknown>[]; answer: (results: unknown[]) => T };

export function read<R, T>(statement: Bound<R>, answer: (rows: R) => T): Read<T> {
  return { statements: [statement], answer: ([rows]) => answer(rows as R) };
}

export function readTwo<A, B, T>(first: Bound<A>, second: Bound<B>, answer: (first: A, second: B) => T): Read<T> {
  return { statements: [first, second], answer: ([a, b]) => answer(a as A, b as B) };
}

export const mapRead = <T, U>({ statements, answer }: Read<T>, map: (value: T) => U): Read<U> => ({
  statements,
  answer: (results) => map(answer(results)),
});

/** Runs a read on its own (the owner's dashboard, where the session was checked before): one round trip. */
export async function runRead<T>(db: ShardDatabase, { statements, answer }: Read<T>): Promise<T> {
  return answer(await runStatements(db, statements));
}

/** A read of nothing beyond the credential's own lookup (`GET /me`, whose business comes with the principal). */
export const nothingMore: Read<undefined> = { statements: [], answer: () => undefined };
