/**
 * Reconcile's write: after a complete pass, bookings in the window it did not serve get
 * `missing_since`. Never a delete; the detail upsert clears the mark when the booking is served again.
 */
import type Database from "better-sqlite3";
import type { UnlistedScope } from "../sync/ports.js";

// What the pass judges: in scope, not marked yet, and known to the mirror before the pass began.
const JUDGED = `missing_since IS NULL AND first_seen_at < @startedAt AND created_at < @startedAt
      AND (@since IS NULL OR created_at >= @since)
      AND (@platform IS NULL OR source_platform = @platform)
      AND (@type IS NULL OR booking_type = @type)`;
// Of those, the ones the run did not list.
const UNLISTED = `${JUDGED} AND listed_by_run IS NOT @runId`;

const scopeParams = (s: UnlistedScope) => ({
  runId: s.runId,
  startedAt: s.startedAt,
  since: s.since ?? null,
  platform: s.sourcePlatform ?? null,
  type: s.bookingType ?? null,
});

/** Prepares `markUnlisted`; returns how many were newly marked. Only after a complete pass. */
export function unlistedMarker(db: Database.Database): (scope: UnlistedScope) => number {
  const mark = db.prepare(`UPDATE bookings SET missing_since = @at WHERE ${UNLISTED}`);
  return (s) => mark.run({ ...scopeParams(s), at: s.at }).changes;
}

/** Prepares `unlistedTimes`: the distinct createdAt `markUnlisted` would mark, newest first. */
export function unlistedTimes(db: Database.Database): (scope: UnlistedScope, limit: number) => string[] {
  const times = db.prepare(
    `SELECT DISTINCT created_at FROM bookings WHERE ${UNLISTED} ORDER BY created_at DESC LIMIT @limit`,
  );
  return (s, limit) => times.pluck().all({ ...scopeParams(s), limit }) as string[];
}

/** Prepares `countUnlisted`: how many `markUnlisted` would mark, of how many it judges. */
export function unlistedCounter(
  db: Database.Database,
): (scope: UnlistedScope) => { unlisted: number; judged: number } {
  const count = db.prepare(
    `SELECT coalesce(sum(listed_by_run IS NOT @runId), 0) AS unlisted, count(*) AS judged
    FROM bookings WHERE ${JUDGED}`,
  );
  return (s) => count.get(scopeParams(s)) as { unlisted: number; judged: number };
}
