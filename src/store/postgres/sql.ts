/** The few helpers the Postgres store's statements share: one query function, multi-row VALUES. */
import type { ClientBase, Pool } from "pg";

/** Runs one statement and returns its rows. */
export type Query = <R = Record<string, unknown>>(text: string, params?: readonly unknown[]) => Promise<R[]>;

/** A `Query` over a client or a pool. */
export function queryOn(db: ClientBase | Pool): Query {
  return async <R>(text: string, params?: readonly unknown[]) =>
    (await db.query(text, params?.map(bindable))).rows as R[];
}

/**
 * PostgreSQL text cannot hold U+0000, which a JSON string and SQLite can: bound text has it
 * replaced by U+FFFD, or one such value from the source would fail its page at every run. Stored
 * JSON is unaffected (`JSON.stringify` escapes it), and lookups are bound the same way.
 */
function bindable(value: unknown): unknown {
  if (typeof value === "string")
    return value.includes("\u0000") ? value.replaceAll("\u0000", "\uFFFD") : value;
  return Array.isArray(value) ? value.map(bindable) : value;
}

/** Postgres binds at most 65,535 parameters in one statement. */
const MAX_PARAMS = 65_535;

/**
 * Inserts `rows` (each `width` values) with `INSERT ... VALUES` lists of as many rows as one
 * statement can bind. `head` is the statement before VALUES, `tail` what follows it.
 */
export async function insertRows(
  query: Query,
  head: string,
  rows: readonly (readonly unknown[])[],
  tail = "",
): Promise<void> {
  const width = rows[0]?.length ?? 0;
  if (width === 0) return;
  const perStatement = Math.floor(MAX_PARAMS / width);
  for (let start = 0; start < rows.length; start += perStatement) {
    const chunk = rows.slice(start, start + perStatement);
    await query(`${head} VALUES ${placeholders(chunk.length, width)} ${tail}`, chunk.flat());
  }
}

/** `($1, $2), ($3, $4)` for 2 rows of 2. */
function placeholders(rows: number, width: number): string {
  const out: string[] = [];
  for (let r = 0; r < rows; r++) {
    const marks: string[] = [];
    for (let c = 1; c <= width; c++) marks.push(`$${r * width + c}`);
    out.push(`(${marks.join(", ")})`);
  }
  return out.join(", ");
}
