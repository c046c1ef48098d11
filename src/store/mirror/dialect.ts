/**
 * The few ways the mirror's SQL differs between SQLite and PostgreSQL, as data: the statements are
 * written once (page-sql.ts) with `?` placeholders and these pieces.
 */

export interface Dialect {
  /** The statement with its `?` placeholders as this database binds them. */
  marks(sql: string): string;
  /** SQL true when `column` is one of the ids bound, as `list` binds them, at one `?`. */
  oneOf(column: string): string;
  /** A list of ids as one bound value. */
  list(ids: readonly string[]): unknown;
  /** The later of two ISO 8601 UTC texts, compared byte by byte; null when either is. */
  later(a: string, b: string): string;
  /** Most rows one multi-row INSERT of `width` values a row takes; `upsert` when it updates on conflict. */
  rowsPerInsert(width: number, upsert: boolean): number;
  /**
   * Taken before a transaction appends booking events, held to its end, so that event ids commit in
   * id order even should two writers' transactions overlap; null where one writer is all there is.
   */
  eventsLock: string | null;
}

export const SQLITE: Dialect = {
  marks: (sql) => sql,
  // The ids travel as one JSON array; SQLite looks each up in the primary key.
  oneOf: (column) => `${column} IN (SELECT value FROM json_each(?))`,
  list: (ids) => JSON.stringify(ids),
  later: (a, b) => `max(${a}, ${b})`,
  // A prepared statement per size: 64 rows keep them few, and far below SQLite's 32,766 variables.
  // An upsert goes row by row: SQLite copies a multi-row VALUES that updates on conflict into a
  // temporary table first, which cost a backfill more CPU than it saved (docs/performance.md).
  rowsPerInsert: (_width, upsert) => (upsert ? 1 : 64),
  // A write transaction holds the whole database.
  eventsLock: null,
};

export const POSTGRES: Dialect = {
  marks: (sql) => {
    let n = 0;
    return sql.replace(/\?/g, () => `$${++n}`);
  },
  oneOf: (column) => `${column} = ANY(?)`,
  list: (ids) => ids,
  // Under the C collation, whatever the database's: ISO text then compares in time order.
  later: (a, b) => `CASE WHEN ${a} COLLATE "C" > ${b} COLLATE "C" THEN ${a} ELSE ${b} END`,
  // PostgreSQL binds at most 65,535 parameters in one statement.
  rowsPerInsert: (width) => Math.floor(65_535 / width),
  // An identity hands out ids as rows are inserted, not as they commit ("evnt" in ASCII).
  eventsLock: "SELECT pg_advisory_xact_lock(1702260340)",
};
