/**
 * The kinds a mirror table is described in (`tables.ts`), and what each database must give to
 * build them: its column builders, indexes and constraints, and its table function.
 */
import type { AnyColumn, BuildColumns, ColumnBuilder, ColumnBuilderBase, SQL } from "drizzle-orm";
import type { PgTableWithColumns } from "drizzle-orm/pg-core";
import type { SQLiteTableWithColumns } from "drizzle-orm/sqlite-core";

/** What the column builders of both databases can do beyond drizzle's common ones. */
interface Keys {
  references(ref: () => AnyColumn, actions?: { onDelete?: "cascade" | "set null" }): this;
  unique(): this;
}
export type Builder = ColumnBuilderBase & ColumnBuilder & Keys;
type B = Builder;
/** A built column as the description hands it to the dialect's index and constraint functions, which type it their way. */
export type Column = never;

/**
 * How one database builds each kind of column, index and constraint; the description below names
 * only the kind. Each builder's type is a parameter, so each database's tables keep their own types.
 */
export interface Dialect<
  T extends B,
  I extends B,
  W extends B,
  R extends B,
  F extends B,
  D extends B,
  P extends B,
  Q extends B,
> {
  /** Text: ids, times, names, JSON as received. */
  text(name: string): T;
  /** An integer the worker itself counts or refers by. */
  integer(name: string): I;
  /** An integer from the source (states, counts, totals), as wide as SQLite's INTEGER. */
  wide(name: string): W;
  /** A JSON number that may have a fraction (money, weights). */
  real(name: string): R;
  /** 0 or 1. */
  flag(name: string): F;
  /** A row id the database assigns, the table's primary key. */
  id(name: string): D;
  /**
   * A position in the events stream (an event id, or one a table refers to): 64-bit on both, as a
   * mirror's events may pass 2^31 in its life. Read back below 2^53, so a JS number holds it.
   */
  position(name: string): P;
  /** The events stream's own ids, assigned by the database as `id`, and as wide as `position`. */
  positionId(name: string): Q;
  index(name: string): { on(...columns: Column[]): { where(condition: SQL): unknown } };
  /** An index on text from the source, which may be of any length. */
  textIndex(name: string, column: Column): unknown;
  check(name: string, condition: SQL): unknown;
  primaryKey(config: { columns: Column[] }): unknown;
  /** `sqliteTable` or `pgTable`. */
  table(name: string, columns: never, extras?: never): unknown;
  /** Which database: how its tables are typed. */
  name: "sqlite" | "pg";
}

/** A table as described: its name, its columns, and its indexes and constraints over them. */
export const spec = <N extends string, C>(
  name: N,
  columns: C,
  extras?: (t: Record<keyof C, Column>) => unknown[],
) => ({ name, columns, extras });

/** What a database's table function makes of each described table. */
export type Built<S, D extends "sqlite" | "pg"> = {
  [K in keyof S]: S[K] extends {
    name: infer N extends string;
    columns: infer C extends Record<string, ColumnBuilderBase>;
  }
    ? D extends "sqlite"
      ? SQLiteTableWithColumns<Config<N, C, "sqlite">>
      : PgTableWithColumns<Config<N, C, "pg">>
    : never;
};

type Config<N extends string, C extends Record<string, ColumnBuilderBase>, D extends "sqlite" | "pg"> = {
  name: N;
  schema: undefined;
  columns: BuildColumns<N, C, D>;
  dialect: D;
};
