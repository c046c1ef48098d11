/**
 * Reconcile's write, for both databases: after a complete pass, bookings in the window it did not
 * serve get `missing_since`. Never a delete; a list page that serves the booking again clears it.
 */
import type { UnlistedScope } from "../../sync/ports.js";
import { SUMMARY_COLUMNS } from "../rows.js";
import { type Ask, asking } from "./ask.js";
import type { Dialect } from "./dialect.js";
import { eventRow, summaryOf } from "./events.js";
import { Statements } from "./statements.js";

// What the pass judges: in scope, not marked yet, and known to the mirror before the pass began.
const JUDGED = `missing_since IS NULL AND first_seen_at < ? AND created_at < ?
  AND (CAST(? AS text) IS NULL OR created_at >= ?) AND (CAST(? AS text) IS NULL OR source_platform = ?)
  AND (CAST(? AS text) IS NULL OR booking_type = ?)`;
// Of those, the ones the run did not list.
const NOT_LISTED = "listed_by_run IS DISTINCT FROM CAST(? AS integer)";
const UNLISTED = `${JUDGED} AND ${NOT_LISTED}`;

/** The values of `JUDGED`, then of `NOT_LISTED`. */
function scope(s: UnlistedScope): unknown[] {
  const since = s.since ?? null;
  const platform = s.sourcePlatform ?? null;
  const type = s.bookingType ?? null;
  return [s.startedAt, s.startedAt, since, since, platform, platform, type, type, s.runId];
}

/** The reconcile statements in dialect `d`. */
export function unlistedSql(d: Dialect) {
  const mark = d.marks(`UPDATE bookings SET missing_since = ? WHERE ${UNLISTED}
    RETURNING id, booking_type, ${SUMMARY_COLUMNS.join(", ")}`);
  const statements = new Statements(d);
  const times = d.marks(
    `SELECT DISTINCT created_at AS at FROM bookings WHERE ${UNLISTED} ORDER BY created_at DESC LIMIT ?`,
  );
  const count = d.marks(`SELECT
      CAST(coalesce(sum(CASE WHEN ${NOT_LISTED} THEN 1 ELSE 0 END), 0) AS integer) AS unlisted,
      CAST(count(*) AS integer) AS judged
    FROM bookings WHERE ${JUDGED}`);
  return {
    /** Marks what a finished pass did not list; answers how many were newly marked. */
    markUnlisted: (s: UnlistedScope): Ask<number> => ({
      ...asking(mark, [s.at, ...scope(s)], (rows) => rows.length),
      events: (rows) => {
        // In id order: the order an UPDATE returns its rows is the database's to choose.
        const ids = rows.map((r) => String(r.id)).sort();
        const byId = new Map(rows.map((r) => [String(r.id), r]));
        const events = ids.map((id) => {
          const r = byId.get(id) as Record<string, unknown>;
          return eventRow(
            "booking.missing",
            id,
            s.at,
            summaryOf(r.booking_type, (column) => r[column]),
          );
        });
        return statements.events(events, s.runId);
      },
    }),
    /** The distinct createdAt `markUnlisted` would mark, newest first, at most `limit`. */
    unlistedTimes: (s: UnlistedScope, limit: number) =>
      asking(times, [...scope(s), limit], (rows) => rows.map((r) => r.at as string)),
    /** How many `markUnlisted` would mark, of how many it judges. */
    countUnlisted: (s: UnlistedScope) => {
      const values = scope(s);
      // NOT_LISTED's value comes first here: the count's CASE precedes the WHERE.
      const params = [values.at(-1), ...values.slice(0, -1)];
      type Counts = { unlisted: number; judged: number };
      return asking(count, params, (rows) => (rows[0] as Counts) ?? { unlisted: 0, judged: 0 });
    },
  };
}
