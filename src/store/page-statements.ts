/**
 * Statements that take a page's rows at once: the stored rows of a page's ids in one query, and child
 * rows many to an INSERT. A statement's fixed cost (binding, stepping, resetting) is then paid once a
 * page, or once in `CHUNK` rows, not once a row (docs/performance.md, 2026-11-27).
 */
import type Database from "better-sqlite3";
import type { Param } from "./rows.js";

/** Rows one INSERT takes at most: 64 child rows of 11 values stay far below SQLite's 32,766 variables. */
const CHUNK = 64;

/**
 * Reads the stored `bookings` rows of the given ids, each with `columns` (an SQL select list), keyed
 * by id; ids not stored are absent from the map.
 */
export function storedRows<T>(
  db: Database.Database,
  columns: string,
): (ids: readonly string[]) => Map<string, T> {
  // One statement for any number of ids: the ids travel as one JSON array, and SQLite looks each up
  // in the primary key.
  const select = db.prepare<[string], T & { id: string }>(
    `SELECT id, ${columns} FROM bookings WHERE id IN (SELECT value FROM json_each(?))`,
  );
  return (ids) => {
    const out = new Map<string, T>();
    if (ids.length === 0) return out;
    for (const row of select.iterate(JSON.stringify(ids))) out.set(row.id, row);
    return out;
  };
}

/** Inserts rows of `columns` into `table`, up to `CHUNK` to a statement; each size is prepared once. */
export function rowInserter(
  db: Database.Database,
  table: string,
  columns: readonly string[],
): (rows: readonly Param[][]) => void {
  const one = `(${columns.map(() => "?").join(", ")})`;
  const statements = new Map<number, Database.Statement>();
  const statement = (n: number) => {
    let s = statements.get(n);
    if (s === undefined) {
      s = db.prepare(`INSERT INTO ${table} (${columns.join(", ")}) VALUES ${Array(n).fill(one).join(", ")}`);
      statements.set(n, s);
    }
    return s;
  };
  return (rows) => {
    for (let start = 0; start < rows.length; start += CHUNK) {
      const end = Math.min(rows.length, start + CHUNK);
      const values: Param[] = [];
      for (let r = start; r < end; r++) for (const v of rows[r] as Param[]) values.push(v);
      statement(end - start).run(values);
    }
  };
}
