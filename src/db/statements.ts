import { Column, fillPlaceholders, is, type Placeholder, type Query, sql } from "drizzle-orm";
import type { Database } from "./client";

/** A query as drizzle prepares it: its SQL and parameters (placeholders among them), and how its rows are mapped. */
type Prepared = { getQuery(): Query; mapResult(response: unknown, isFromBatch?: boolean): unknown };

/** What drizzle's prepared query holds at run time (not in its types): how it maps the rows of a select. */
type PreparedInternals = {
  executeMethod?: string;
  customResultMapper?: unknown;
  fields?: Array<{ path: string[]; field: unknown }>;
};

/**
 * The rows of a select of plain columns (`select()` of one table, or of some of its columns), mapped as drizzle maps
 * them, by column name and with each column's own decoder looked up once per shape instead of once per value:
 * drizzle's general mapper checks every value's field kind, which for a page of 100 bookings of 27 columns cost
 * more than the rest of the request's own work (docs/performance.md). Undefined for any other statement (joins,
 * computed fields, writes), which keeps drizzle's mapping.
 */
function plainColumnsMapper(prepared: Prepared): ((result: D1Result) => unknown) | undefined {
  const { executeMethod, customResultMapper, fields } = prepared as Prepared & PreparedInternals;
  if (executeMethod !== "all" || customResultMapper || !fields) return undefined;
  const columns: Array<[key: string, column: Column]> = [];
  for (const { path, field } of fields) {
    const [key] = path;
    if (path.length !== 1 || key === undefined || !is(field, Column)) return undefined;
    columns.push([key, field]);
  }
  // D1 answers rows as objects by column name: two selected columns of one name would collapse.
  if (new Set(columns.map(([, column]) => column.name)).size !== columns.length) return undefined;
  return ({ results }) =>
    (results as Record<string, unknown>[]).map((row) => {
      const mapped: Record<string, unknown> = {};
      for (const [key, column] of columns) {
        const value = row[column.name];
        mapped[key] = value === null || value === undefined ? null : column.mapFromDriverValue(value);
      }
      return mapped;
    });
}

/** A statement's shape: its SQL rendered once, and the mapping of its answer. */
type Shape = { query: Query; map: (result: D1Result) => unknown };

const shapeOf = (prepared: Prepared): Shape => ({
  query: prepared.getQuery(),
  map: plainColumnsMapper(prepared) ?? ((result) => prepared.mapResult(result, true)),
});

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
export type Bound<T> = { prepared: (db: Database) => Shape; values: Record<string, unknown>; rows?: T };

/**
 * A statement whose SQL is rendered once per shape and isolate, not once per request: drizzle spends about 100 µs
 * building a lookup's SQL, more than the rest of a read's own work (docs/decisions.md, Performance: one round trip
 * per read). `build` is given a placeholder for every value, so it can depend only on which values are given and on
 * the shape of each `ShapedArgument`, never on a value itself: the shape key is exactly that, so two uses of one key
 * render the same SQL. Placeholder values are bound as they are (no column mapping): give them as stored (strings and
 * numbers).
 */
export const statement =
  <A extends Record<string, unknown>>() =>
  <T>(build: (db: Database, args: Placeheld<A>) => Preparable<T>): ((args: A) => Bound<T>) => {
    const shapes = new Map<string, Shape>();
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
          shape = shapeOf(build(db, placeheld).prepare());
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
export const oneOff = <T>(query: Preparable<T>): Bound<T> => ({ prepared: () => shapeOf(query.prepare()), values: {} });

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
  const shapes = bound.map((statement) => statement.prepared(db));
  const results = await d1.batch(
    shapes.map(({ query }, i) => d1.prepare(query.sql).bind(...fillPlaceholders(query.params, bound[i]?.values ?? {}))),
  );
  return results.map((result, i) => shapes[i]?.map(result));
}
