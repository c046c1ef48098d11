/**
 * Watches a SQLite mirror another process fills, read-only, for the cold-start benchmark
 * (bench/cold-start.ts): is every booking the source serves there, with details?
 */
import { existsSync } from "node:fs";
import Database from "better-sqlite3";

/** How far a mirror has got: rows, and rows still lacking details. */
export interface Fill {
  bookings: number;
  lackingDetails: number;
}

/**
 * "Lacking details" as the store's details queue defines it (`bookingsNeedingDetails` in
 * src/store/reads.ts, over the partial index in src/store/schema.ts): never detailed, or detailed
 * before its summary last changed, and not marked missing.
 */
const LACKING = `(detail_synced_at IS NULL OR summary_synced_at > detail_synced_at) AND missing_since IS NULL`;

/**
 * A watch over the file at `path` (which may not exist yet). `complete(total)` is cheap while the
 * mirror is far from it, so it can be polled often beside the process under measurement: the
 * highest rowid bounds the row count from above (one index seek), the queue's query answers "any
 * lacking details?" from its partial index, and only then are rows counted.
 */
export function watchMirror(path: string) {
  let db: Database.Database | undefined;
  let statements: ReturnType<typeof prepare> | undefined;
  const prepare = (d: Database.Database) => ({
    maxRowid: d.prepare("SELECT coalesce(max(rowid), 0) FROM bookings").pluck(),
    anyLacking: d
      .prepare(
        `SELECT 1 FROM bookings WHERE ${LACKING} AND created_at IS NOT NULL ORDER BY created_at DESC LIMIT 1`,
      )
      .pluck(),
    rows: d.prepare("SELECT count(*) FROM bookings").pluck(),
    lacking: d.prepare(`SELECT count(*) FROM bookings WHERE ${LACKING}`).pluck(),
  });
  /** The statements, once the file and its `bookings` table exist; undefined before. */
  const open = () => {
    if (statements) return statements;
    if (!db) {
      // Only once the daemon has put the file in WAL mode: before that, a reader could block it.
      if (!existsSync(`${path}-wal`)) return undefined;
      db = new Database(path, { readonly: true, fileMustExist: true });
    }
    try {
      statements = prepare(db);
    } catch {
      // The migrations have not made the table yet.
    }
    return statements;
  };
  return {
    /** Whether the mirror holds `total` bookings and none lacks details. */
    complete(total: number): boolean {
      try {
        const s = open();
        if (!s || (s.maxRowid.get() as number) < total || s.anyLacking.get() !== undefined) return false;
        return (s.rows.get() as number) === total && (s.lacking.get() as number) === 0;
      } catch {
        // Busy, or the schema changing under us: ask again on the next poll.
        return false;
      }
    },
    /** Exact counts (a full scan: for the report, not for polling). */
    fill(): Fill {
      const s = open();
      if (!s) return { bookings: 0, lackingDetails: 0 };
      return { bookings: s.rows.get() as number, lackingDetails: s.lacking.get() as number };
    },
    close(): void {
      db?.close();
    },
  };
}
