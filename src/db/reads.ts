import type { BatchItem } from "drizzle-orm/batch";
import type { Database } from "./client";

/**
 * A read as data: its statements, and how their rows become the answer. A read is built apart from its execution so
 * that a partner read goes in one `db.batch` with the credential's lookup (DESIGN.md, Performance budget: one round
 * trip); `answer` may throw (a 404), and is called only once the credential is accepted.
 */
export type Read<T> = { statements: BatchItem<"sqlite">[]; answer: (results: unknown[]) => T };

export function read<Q extends BatchItem<"sqlite">, T>(query: Q, answer: (rows: Awaited<Q>) => T): Read<T> {
  return { statements: [query], answer: ([rows]) => answer(rows as Awaited<Q>) };
}

export function readTwo<A extends BatchItem<"sqlite">, B extends BatchItem<"sqlite">, T>(
  first: A,
  second: B,
  answer: (first: Awaited<A>, second: Awaited<B>) => T,
): Read<T> {
  return { statements: [first, second], answer: ([a, b]) => answer(a as Awaited<A>, b as Awaited<B>) };
}

export const mapRead = <T, U>({ statements, answer }: Read<T>, map: (value: T) => U): Read<U> => ({
  statements,
  answer: (results) => map(answer(results)),
});

/** Runs a read on its own (the owner's dashboard, where the session was checked before): one round trip. */
export async function runRead<T>(db: Database, { statements, answer }: Read<T>): Promise<T> {
  const [first, ...rest] = statements;
  if (!first) return answer([]);
  return answer(await db.batch([first, ...rest]));
}

/** A read of nothing beyond the credential's own lookup (`GET /me`, whose business comes with the principal). */
export const nothingMore: Read<undefined> = { statements: [], answer: () => undefined };
