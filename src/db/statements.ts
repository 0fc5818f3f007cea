import { fillPlaceholders, type Placeholder, type Query, sql } from "drizzle-orm";
import type { Database } from "./client";

/** A query as drizzle prepares it: its SQL and parameters (placeholders among them), and how its rows are mapped. */
type Prepared = { getQuery(): Query; mapResult(response: unknown, isFromBatch?: boolean): unknown };

/** A query builder: awaited, it answers `T`; prepared, it renders its SQL. */
export type Preparable<T> = PromiseLike<T> & { prepare(): Prepared };

/**
 * An argument that stands for more than one value (a reach: a business, a principal's ids, a credential): the part of
 * the statement's shape it decides, the values of its placeholders, and what the statement is built with in its place.
 */
export type ShapedArgument<T> = {
  readonly shape: string;
  readonly values: Record<string, unknown>;
  placeheld(db: Database): T;
};

export const shapedArgument = <T>(
  shape: string,
  values: Record<string, unknown>,
  placeheld: (db: Database) => T,
): ShapedArgument<T> => ({ shape, values, placeheld });

const isShaped = (value: unknown): value is ShapedArgument<unknown> =>
  typeof value === "object" && value !== null && "placeheld" in value && "shape" in value;

/** What a statement is built with: a placeholder for each plain value given, `undefined` for each one left out. */
export type Placeheld<A> = {
  [K in keyof A]-?: A[K] extends ShapedArgument<infer T>
    ? T
    : undefined extends A[K]
      ? Placeholder | undefined
      : Placeholder;
};

/** One use of a statement: its prepared shape and the values of this use; awaited in a batch, it answers `T`. */
export type Bound<T> = { prepared: (db: Database) => Prepared; values: Record<string, unknown>; rows?: T };

/**
 * A statement whose SQL is rendered once per shape and isolate, not once per request (DESIGN.md, Performance budget:
 * drizzle spends about 100 µs building a lookup's SQL, more than the rest of a read's own work). `build` is given a
 * placeholder for every value, so it can depend only on which values are given and on the shape of each
 * `ShapedArgument`, never on a value itself: the shape key is exactly that, so two uses of one key render the same SQL.
 * Placeholder values are bound as they are (no column mapping): give them as stored (strings and numbers).
 */
export const statement =
  <A extends Record<string, unknown>>() =>
  <T>(build: (db: Database, args: Placeheld<A>) => Preparable<T>): ((args: A) => Bound<T>) => {
    const shapes = new Map<string, Prepared>();
    return (args) => {
      let key = "";
      const values: Record<string, unknown> = {};
      for (const [name, value] of Object.entries(args)) {
        if (value === undefined) key += `${name}:-;`;
        else if (isShaped(value)) {
          key += `${name}:${value.shape};`;
          Object.assign(values, value.values);
        } else {
          key += `${name};`;
          values[name] = value;
        }
      }
      const prepared = (db: Database) => {
        let shape = shapes.get(key);
        if (!shape) {
          const placeheld = Object.fromEntries(
            Object.entries(args).map(([name, value]) => [
              name,
              value === undefined ? undefined : isShaped(value) ? value.placeheld(db) : sql.placeholder(name),
            ]),
          ) as Placeheld<A>;
          shape = build(db, placeheld).prepare();
          shapes.set(key, shape);
        }
        return shape;
      };
      return { prepared, values };
    };
  };

/**
 * A statement whose SQL depends on more than which values are given (a multi-row insert, an upsert of a whole row):
 * rendered for this use only, and batched with bound statements as one of them.
 */
export const oneOff = <T>(query: Preparable<T>): Bound<T> => ({ prepared: () => query.prepare(), values: {} });

/**
 * Ids as ONE bound value, a JSON array, for `inArray(column, idsIn(placeholder))`: one shape for any number of ids,
 * and one parameter where a list binds one per id (D1 binds at most 100 a statement). SQLite searches the column's
 * index once per id.
 */
export const idsIn = (json: Placeholder | string) => sql`(select value from json_each(${json}))`;

/** Bound statements in one D1 batch (one round trip), each answer mapped as drizzle maps it. */
export async function runStatements(db: Database, bound: Bound<unknown>[]): Promise<unknown[]> {
  if (bound.length === 0) return [];
  const d1 = db.$client;
  const prepared = bound.map((statement) => statement.prepared(db));
  const results = await d1.batch(
    prepared.map((shape, i) => {
      const { sql: text, params } = shape.getQuery();
      return d1.prepare(text).bind(...fillPlaceholders(params, bound[i]?.values ?? {}));
    }),
  );
  return results.map((result, i) => prepared[i]?.mapResult(result, true));
}
