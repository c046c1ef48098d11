/** An entry of the data dictionary: a table or view and what each of its columns means. */
import { getTableColumns, getTableName, type Table } from "drizzle-orm";

/** One column of a table or view. */
export interface ColumnEntry {
  /** What a value means, with its unit (NGN; UTC ISO 8601 text; 0/1). */
  meaning: string;
  /**
   * Where it comes from: a contract field with the views that carry it (`` `totalAmount` (summary and
   * full views) ``), a path into the full record (`` `packages.packages[].items[].hsCode` ``), or how
   * the worker or the view derives it.
   */
  source: string;
}

/** A table or view. */
export interface RelationEntry {
  description: string;
  /** The worker's own bookkeeping, not for analysis: hidden in Datasette, marked in docs/schema.md. */
  internal: boolean;
  /** Every column, in the database's order. */
  columns: Readonly<Record<string, ColumnEntry>>;
}

/** How the dictionary writes a time. */
export const UTC = "UTC ISO 8601 text with milliseconds";

/** A builder of columns that all come from `source`. */
export const by =
  (source: string) =>
  (meaning: string): ColumnEntry => ({ meaning, source });

/** A value the sync worker sets itself. */
export const worker = by("Worker");

/**
 * `table`'s entry under its name, its columns named and ordered as the database has them; a column
 * `tables.ts` adds and `entry` does not describe fails the typecheck.
 */
export function described<T extends Table>(
  table: T,
  entry: { description: string; internal?: boolean; columns: Record<keyof T["$inferSelect"], ColumnEntry> },
): [string, RelationEntry] {
  const meanings: Record<string, ColumnEntry> = entry.columns;
  const columns = Object.entries(getTableColumns(table)).map(([key, c]) => [c.name, meanings[key]]);
  const { description, internal = false } = entry;
  return [getTableName(table), { description, internal, columns: Object.fromEntries(columns) }];
}
