import { Column, fillPlaceholders, is, type Placeholder, type Query, sql } from "drizzle-orm";
import type { ShardDatabase } from "./client";

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
  const keys = columns.map(([key]) => key);
  const names = columns.map(([, column]) => column.name);
  // A column whose decoder is drizzle's own identity (a plain text or integer) is copied as D1 answers it, without a
  // call per value: a page of 100 bookings holds 2,700 values.
  const decoders = columns.map(([, column]) =>
    column.mapFromDriverValue === Column.prototype.mapFromDriverValue
      ? undefined
      : column.mapFromDriverValue.bind(column),
  );
  return ({ results }) =>
    (results as Record<string, unknown>[]).map((row) => {
      const mapped: Record<string, unknown> = {};
      for (let i = 0; i < keys.length; i++) {
        const value = row[names[i] as string];
        const decode = decoders[i];
        mapped[keys[i] as string] = value === null || value === undefined ? null : decode ? decode(value) : value;
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

/** Marks a `ShapedArgument` made by `argumentShape`; not exported, so that none is made by hand. */
const DECLARED: unique symbol = Symbol("declared by argumentShape");

/**
 * An argument that stands for more than one value (a reach: a business, a principal's ids, a credential): the part of
 * the statement's shape it decides, the values of its placeholders, and what the statement is built with in its place.
 * Made only by an `ArgumentShape` (below), never by hand: its `shape` and `placeheld` come from the declaration.
 */
export type ShapedArgument<T> = {
  readonly [DECLARED]: true;
  readonly shape: string;
  readonly names: readonly string[];
  readonly values: Readonly<Record<string, BindValue>>;
  placeheld(db: ShardDatabase): T;
};

/** What D1 binds: values are given as stored. */
export type BindValue = string | number | null;

/** The placeholders of an argument shape's values, one per name. */
export type Placeholders<N extends string> = { readonly [K in N]: Placeholder<K> };

/** Declares a kind of `ShapedArgument`: call it with this use's values. */
export type ArgumentShape<T, N extends string> = (values: { readonly [K in N]: BindValue }) => ShapedArgument<T>;

let declaredShapes = 0;

/**
 * Declares a kind of `ShapedArgument`, once, at module level. `build` is given the database and a placeholder per
 * name, never a value, so the SQL it renders is the same for every use: the shape key is this declaration itself
 * (`name` and a serial number), not a string the caller chooses. A second declaration, even of the same name, is
 * another shape: a builder declared inside a function still renders correct SQL, only never from the cache.
 */
export function argumentShape<T, const N extends string>(
  name: string,
  names: readonly N[],
  build: (db: ShardDatabase, placeholders: Placeholders<N>) => T,
): ArgumentShape<T, N> {
  const shape = `${name}#${++declaredShapes}`;
  const placeheld = (db: ShardDatabase) =>
    build(db, Object.fromEntries(names.map((each) => [each, sql.placeholder(each)])) as Placeholders<N>);
  return (values) => ({ [DECLARED]: true, shape, names, values, placeheld });
}

const isShaped = (value: unknown): value is ShapedArgument<unknown> =>
  typeof value === "object" && value !== null && DECLARED in value;

/**
 * What a statement is built with: a placeholder for each plain value given, `undefined` for each one left out, and
 * what a shaped argument is declared to render with (its `ArgumentShape`'s placeholders). Never a value.
 */
export type Placeheld<A> = {
  [K in keyof A]-?: NonNullable<A[K]> extends ShapedArgument<infer T>
    ? T | (undefined extends A[K] ? undefined : never)
    : undefined extends A[K]
      ? Placeholder | undefined
      : Placeholder;
};

/** One use of a statement: its prepared shape and the values of this use; awaited in a batch, it answers `T`. */
export type Bound<T> = { prepared: (db: ShardDatabase) => Shape; values: Record<string, unknown>; rows?: T };

/**
 * A statement whose SQL is rendered once per shape and isolate, not per request, and whose values are bound as given
 * (as stored). Safe because its SQL depends only on its shape, by construction: `build` sees placeholders, never
 * values, a `ShapedArgument` comes only from an `argumentShape`, and a shape's placeholder names are checked once
 * (docs/decisions.md, Performance: one round trip per read).
 */
export const statement =
  <A extends Record<string, unknown>>() =>
  <T>(build: (db: ShardDatabase, args: Placeheld<A>) => Preparable<T>): ((args: A) => Bound<T>) => {
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
      const prepared = (db: ShardDatabase) => {
        let shape = shapes.get(key);
        if (!shape) {
          shape = shapeOf(build(db, placeheldArguments(db, args)).prepare());
          shapes.set(key, shape);
        }
        return shape;
      };
      return { prepared, values };
    };
  };

/** The arguments of a statement as its builder sees them (see `statement`), their placeholder names checked. */
function placeheldArguments<A extends Record<string, unknown>>(db: ShardDatabase, args: A): Placeheld<A> {
  const bound = new Set<string>();
  const bind = (name: string) => {
    if (bound.has(name)) throw new Error(`Two arguments of one statement bind the placeholder "${name}".`);
    bound.add(name);
  };
  const placeheld = Object.entries(args).map(([name, value]) => {
    if (value === undefined) return [name, undefined];
    if (!isShaped(value)) {
      bind(name);
      return [name, sql.placeholder(name)];
    }
    for (const each of value.names) bind(each);
    return [name, value.placeheld(db)];
  });
  return Object.fromEntries(placeheld) as Placeheld<A>;
}

/**
 * A statement whose SQL depends on more than which values are given (a multi-row insert, an upsert of a whole row):
 * rendered for this use only, and batched with bound statements as one of them.
 */
export const oneOff = <T>(query: Preparable<T>): Bound<T> => ({ prepared: () => shapeOf(query.prepare()), values: {} });

/** A statement of a batch: bound (rendered once per shape) or a query builder (rendered for this use). */
export type BatchStatement = Bound<unknown> | Preparable<unknown>;

export const asBound = (statement: BatchStatement): Bound<unknown> =>
  "prepared" in statement ? statement : oneOff(statement);

/**
 * Ids as ONE bound value, a JSON array, for `inArray(column, idsIn(placeholder))`: one shape for any number of ids,
 * and one parameter where a list binds one per id (D1 binds at most 100 a statement). SQLite searches the column's
 * index once per id.
 */
export const idsIn = (json: Placeholder | string) => sql`(select value from json_each(${json}))`;

/** Bound statements in one D1 batch (one round trip), each answer mapped as drizzle maps it. */
export async function runStatements(db: ShardDatabase, bound: Bound<unknown>[]): Promise<unknown[]> {
  if (bound.length === 0) return [];
  const d1 = db.$client;
  const shapes = bound.map((statement) => statement.prepared(db));
  const results = await d1.batch(
    shapes.map(({ query }, i) => d1.prepare(query.sql).bind(...fillPlaceholders(query.params, bound[i]?.values ?? {}))),
  );
  return results.map((result, i) => shapes[i]?.map(result));
}
