/** The Postgres store's one query function. */
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
