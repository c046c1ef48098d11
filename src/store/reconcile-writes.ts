/**
 * Reconcile's write: after a complete list-bookings pass over a time window (or everything), the
 * bookings in that window the pass did not serve get `missing_since`. Never a delete; the detail
 * upsert clears the mark when the source serves the booking again.
 */
import type Database from "better-sqlite3";
import type { UnlistedScope } from "../sync/detail-ports.js";

export type { UnlistedScope } from "../sync/detail-ports.js";

/**
 * Prepares `markUnlisted` once per connection: every booking in scope that the run did not list
 * (`listed_by_run`) and that the mirror knew before the pass began gets `missing_since` (kept if
 * already set). Returns how many were newly marked. Call it only after a complete pass: a partial
 * one would mark bookings it never reached.
 */
export function unlistedMarker(db: Database.Database): (scope: UnlistedScope) => number {
  const mark = db.prepare(`
    UPDATE bookings SET missing_since = @at
    WHERE missing_since IS NULL AND listed_by_run IS NOT @runId
      AND first_seen_at < @startedAt AND created_at < @startedAt
      AND (@since IS NULL OR created_at >= @since)
      AND (@platform IS NULL OR source_platform = @platform)`);
  return (s) =>
    mark.run({
      runId: s.runId,
      startedAt: s.startedAt,
      at: s.at,
      since: s.since ?? null,
      platform: s.sourcePlatform ?? null,
    }).changes;
}

/**
 * Prepares `unlistedTimes`: the distinct createdAt of the bookings `markUnlisted` would mark,
 * newest first, at most `limit`, so each can be looked up again before anything is marked.
 */
export function unlistedTimes(db: Database.Database): (scope: UnlistedScope, limit: number) => string[] {
  const times = db.prepare(`
    SELECT DISTINCT created_at FROM bookings
    WHERE missing_since IS NULL AND listed_by_run IS NOT @runId
      AND first_seen_at < @startedAt AND created_at < @startedAt
      AND (@since IS NULL OR created_at >= @since)
      AND (@platform IS NULL OR source_platform = @platform)
    ORDER BY created_at DESC LIMIT @limit`);
  return (s, limit) =>
    times.pluck().all({
      runId: s.runId,
      startedAt: s.startedAt,
      since: s.since ?? null,
      platform: s.sourcePlatform ?? null,
      limit,
    }) as string[];
}
