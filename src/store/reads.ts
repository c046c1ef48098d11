/** Reads other modules need: stream state, counts, and the details queue. */
import type Database from "better-sqlite3";
import { and, count, eq, isNull, type SQL } from "drizzle-orm";
import type { BetterSQLite3Database } from "drizzle-orm/better-sqlite3";
import type { BookingType, StreamState, WalkProgress } from "../sync/ports.js";
import type * as schema from "./schema.js";
import { bookings } from "./schema.js";

/** Which bookings `countBookings` counts; every field narrows, none counts all rows. */
export interface BookingFilter {
  bookingType?: BookingType | undefined;
  sourcePlatform?: string | undefined;
  /** Leave out bookings reconcile marked missing; default false (count every row). */
  excludeMissing?: boolean | undefined;
}

export interface Reads {
  /** The stream's checkpoint and unfinished walk (both null for a stream never written). */
  readStream(stream: string): StreamState;
  /** The stream's checkpoint and stored progress, for kinds of work other than the feed walk. */
  readProgress<T>(stream: string): { checkpoint: string | null; progress: T | null };
  /** How many bookings the mirror holds, optionally narrowed. */
  countBookings(filter?: BookingFilter): number;
  /** Bookings not marked missing whose details are absent or older than their summary, newest first. */
  bookingsNeedingDetails(limit: number): Array<{ id: string; createdAt: string }>;
  /** Rows not marked missing, created at or after `since` (UTC, ms) when given; rejects do not count. */
  countAccounted(since?: string | null): number;
  /** Which of `ids` the mirror has no row for (or only one marked missing). */
  absentIds(ids: readonly string[]): string[];
}

/** Prepares the read statements once per connection. */
export function reads(db: Database.Database, orm: BetterSQLite3Database<typeof schema>): Reads {
  const state = db.prepare<[string], { checkpoint: string | null; progress: string | null }>(
    "SELECT checkpoint, progress_json AS progress FROM sync_state WHERE stream = ?",
  );
  // The condition repeats the partial index's verbatim (schema.ts), so SQLite uses that index.
  const needing = db.prepare<[number], { id: string; createdAt: string }>(`
    SELECT id, created_at AS createdAt FROM bookings
    WHERE (detail_synced_at IS NULL OR summary_synced_at > detail_synced_at) AND missing_since IS NULL
      AND created_at IS NOT NULL
    ORDER BY created_at DESC LIMIT ?`);
  // Without a time, every booking counts, those kept without a valid `createdAt` too.
  const accounted = db.prepare<[{ since: string }], { n: number }>(
    "SELECT count(*) AS n FROM bookings WHERE missing_since IS NULL AND (@since = '' OR created_at >= @since)",
  );
  const absent = db.prepare<[string], string>(`
    SELECT value FROM json_each(?)
    WHERE value NOT IN (SELECT id FROM bookings WHERE missing_since IS NULL)`);
  const readProgress = <T>(stream: string) => {
    const row = state.get(stream);
    const progress = row?.progress ? (JSON.parse(row.progress) as T) : null;
    return { checkpoint: row?.checkpoint ?? null, progress };
  };
  return {
    readStream(stream) {
      const { checkpoint, progress } = readProgress<WalkProgress>(stream);
      return { stream, checkpoint, walk: progress };
    },
    readProgress,
    countBookings(filter = {}) {
      const where: SQL[] = [];
      if (filter.bookingType) where.push(eq(bookings.bookingType, filter.bookingType));
      if (filter.sourcePlatform) where.push(eq(bookings.sourcePlatform, filter.sourcePlatform));
      if (filter.excludeMissing) where.push(isNull(bookings.missingSince));
      const row = orm
        .select({ n: count() })
        .from(bookings)
        .where(and(...where))
        .get();
      return row?.n ?? 0;
    },
    bookingsNeedingDetails(limit) {
      return needing.all(limit);
    },
    countAccounted(since) {
      return (accounted.get({ since: since ?? "" }) as { n: number }).n;
    },
    absentIds(ids) {
      return ids.length === 0 ? [] : absent.pluck().all(JSON.stringify(ids));
    },
  };
}
