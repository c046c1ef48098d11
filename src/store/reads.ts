/**
 * The reads other modules need (stream state, counts, the details queue), written once for both
 * databases as statements and how their rows make the answer; each store executes them its way.
 */
import type { BookingType, StreamState, WalkProgress } from "../sync/ports.js";
import { type Ask, asking } from "./mirror/ask.js";
import type { Dialect } from "./mirror/dialect.js";

/** Which bookings `countBookings` counts; every field narrows, none counts all rows. */
export interface BookingFilter {
  bookingType?: BookingType | undefined;
  sourcePlatform?: string | undefined;
  /** Leave out bookings reconcile marked missing; default false (count every row). */
  excludeMissing?: boolean | undefined;
}

const count = (rows: Array<Record<string, unknown>>) => Number(rows[0]?.n ?? 0);

/** The read statements in dialect `d`. */
export function readSql(d: Dialect) {
  const state = d.marks("SELECT checkpoint, progress_json AS progress FROM sync_state WHERE stream = ?");
  // The condition repeats the partial index's verbatim (tables.ts), so the database uses that index.
  const needing = d.marks(`SELECT id, created_at AS "createdAt", coalesce(details_misses, 0) AS misses
    FROM bookings
    WHERE (detail_synced_at IS NULL OR summary_synced_at > detail_synced_at) AND missing_since IS NULL
      AND created_at IS NOT NULL AND (details_seek_after IS NULL OR details_seek_after <= ?)
    ORDER BY created_at DESC LIMIT ?`);
  // Without a time, every booking counts, those kept without a valid `createdAt` too.
  const accounted = d.marks(
    "SELECT count(*) AS n FROM bookings WHERE missing_since IS NULL AND (? = '' OR created_at >= ?)",
  );
  const present = d.marks(`SELECT id FROM bookings WHERE missing_since IS NULL AND ${d.oneOf("id")}`);
  const earlier = d.marks(`SELECT id FROM bookings WHERE first_seen_at < ? AND ${d.oneOf("id")}`);
  // With the bound above as a bound, not a test, so the index's range stops there.
  const between = (bounded: boolean) =>
    d.marks(`SELECT 1 AS n FROM bookings WHERE missing_since IS NULL AND created_at > ?
      ${bounded ? "AND created_at < ?" : ""} AND (? = '' OR booking_type = ?)
      AND NOT (${d.oneOf("id")}) LIMIT 1`);
  const betweenBounded = between(true);
  const betweenAbove = between(false);
  const readProgress = <T>(stream: string) =>
    asking(state, [stream], ([row]) => ({
      checkpoint: (row?.checkpoint as string | null | undefined) ?? null,
      progress: row?.progress ? (JSON.parse(row.progress as string) as T) : null,
    }));
  return {
    /** The stream's checkpoint and stored progress, both null for a stream never written. */
    readProgress,
    /** The stream's checkpoint and unfinished walk. */
    readStream: (stream: string): Ask<StreamState> => {
      const { statement, answer } = readProgress<WalkProgress>(stream);
      return asking(statement.sql, statement.params, (rows) => {
        const { checkpoint, progress } = answer(rows);
        return { stream, checkpoint, walk: progress };
      });
    },
    /** How many bookings the mirror holds, optionally narrowed. */
    countBookings: (filter: BookingFilter = {}): Ask<number> => {
      const where = ["1 = 1"];
      const params: unknown[] = [];
      if (filter.bookingType) where.push("booking_type = ?") && params.push(filter.bookingType);
      if (filter.sourcePlatform) where.push("source_platform = ?") && params.push(filter.sourcePlatform);
      if (filter.excludeMissing) where.push("missing_since IS NULL");
      const sql = d.marks(`SELECT count(*) AS n FROM bookings WHERE ${where.join(" AND ")}`);
      return asking(sql, params, count);
    },
    /** Bookings not marked missing whose details are absent or older than their summary, newest first; not those put off past `now`. */
    bookingsNeedingDetails: (limit: number, now: string) =>
      asking(needing, [now, limit], (rows) =>
        rows.map((r) => ({ id: r.id as string, createdAt: r.createdAt as string, misses: Number(r.misses) })),
      ),
    /** Rows not marked missing, created at or after `since` (UTC, ms) when given; rejects do not count. */
    countAccounted: (since?: string | null) => asking(accounted, [since ?? "", since ?? ""], count),
    /** Which of `ids` the mirror has no row for (or only one marked missing), in their order. */
    absentIds: (ids: readonly string[]) =>
      asking(present, [d.list(ids)], (rows) => {
        const held = new Set(rows.map((r) => r.id));
        return ids.filter((id) => !held.has(id));
      }),
    /** Which of `ids` the mirror first stored before `at` (marked missing since or not), in their order. */
    storedBefore: (ids: readonly string[], at: string) =>
      asking(earlier, [at, d.list(ids)], (rows) => {
        const stored = new Set(rows.map((r) => r.id));
        return ids.filter((id) => stored.has(id));
      }),
    /**
     * Whether the mirror holds a booking not marked missing created strictly between `after` and
     * `before` (UTC, ms; no bound above when null), of `type` when given, other than `except`.
     */
    holdsBetween: (
      after: string,
      before: string | null,
      type?: BookingType,
      except: readonly string[] = [],
    ) => {
      const rest = [type ?? "", type ?? "", d.list(except)];
      const found = (rows: unknown[]) => rows.length > 0;
      return before === null
        ? asking(betweenAbove, [after, ...rest], found)
        : asking(betweenBounded, [after, before, ...rest], found);
    },
  };
}
