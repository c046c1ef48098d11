/** The port's reads and reconcile's marks and counts in Postgres: the twins of ../reads.ts and ../reconcile-writes.ts. */
import type { StreamState, UnlistedScope, WalkProgress } from "../../sync/ports.js";
import type { BookingFilter } from "../reads.js";
import type { Query } from "./sql.js";

/** The stream's checkpoint and stored progress, both null when never written. */
export async function readProgress<T>(
  query: Query,
  stream: string,
): Promise<{ checkpoint: string | null; progress: T | null }> {
  const [row] = await query<{ checkpoint: string | null; progress: string | null }>(
    "SELECT checkpoint, progress_json AS progress FROM sync_state WHERE stream = $1",
    [stream],
  );
  return {
    checkpoint: row?.checkpoint ?? null,
    progress: row?.progress ? (JSON.parse(row.progress) as T) : null,
  };
}

export async function readStream(query: Query, stream: string): Promise<StreamState> {
  const { checkpoint, progress } = await readProgress<WalkProgress>(query, stream);
  return { stream, checkpoint, walk: progress };
}

export async function countBookings(query: Query, filter: BookingFilter = {}): Promise<number> {
  const where: string[] = [];
  const params: unknown[] = [];
  if (filter.bookingType) where.push(`booking_type = $${params.push(filter.bookingType)}`);
  if (filter.sourcePlatform) where.push(`source_platform = $${params.push(filter.sourcePlatform)}`);
  if (filter.excludeMissing) where.push("missing_since IS NULL");
  const condition = where.length > 0 ? `WHERE ${where.join(" AND ")}` : "";
  return count(query, `SELECT count(*)::integer AS n FROM bookings ${condition}`, params);
}

/** The condition repeats the partial index's verbatim (schema.ts), so Postgres uses that index. */
export function bookingsNeedingDetails(query: Query, limit: number) {
  return query<{ id: string; createdAt: string }>(
    `SELECT id, created_at AS "createdAt" FROM bookings
    WHERE (detail_synced_at IS NULL OR summary_synced_at > detail_synced_at) AND missing_since IS NULL
      AND created_at IS NOT NULL
    ORDER BY created_at DESC LIMIT $1`,
    [limit],
  );
}

export function countAccounted(query: Query, since?: string | null): Promise<number> {
  // Without a time, every booking counts, those kept without a valid `createdAt` too.
  const sql =
    "SELECT count(*)::integer AS n FROM bookings WHERE missing_since IS NULL AND ($1 = '' OR created_at >= $1)";
  return count(query, sql, [since ?? ""]);
}

export async function absentIds(query: Query, ids: readonly string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const rows = await query<{ id: string }>(
    `SELECT id FROM unnest($1::text[]) WITH ORDINALITY AS t(id, n)
    WHERE NOT EXISTS (SELECT 1 FROM bookings b WHERE b.id = t.id AND b.missing_since IS NULL) ORDER BY n`,
    [ids],
  );
  return rows.map((r) => r.id);
}

// What the pass judges: in scope, not marked yet, and known to the mirror before the pass began.
const JUDGED = `missing_since IS NULL AND first_seen_at < $2 AND created_at < $2
  AND ($3::text IS NULL OR created_at >= $3) AND ($4::text IS NULL OR source_platform = $4)
  AND ($5::text IS NULL OR booking_type = $5)`;
// Of those, the ones the run did not list.
const NOT_LISTED = "listed_by_run IS DISTINCT FROM $1::integer";
const UNLISTED = `${JUDGED} AND ${NOT_LISTED}`;

const scopeParams = (s: UnlistedScope) => [
  s.runId,
  s.startedAt,
  s.since ?? null,
  s.sourcePlatform ?? null,
  s.bookingType ?? null,
];

export async function markUnlisted(query: Query, scope: UnlistedScope): Promise<number> {
  const sql = `WITH marked AS (UPDATE bookings SET missing_since = $6 WHERE ${UNLISTED} RETURNING 1)
    SELECT count(*)::integer AS n FROM marked`;
  return count(query, sql, [...scopeParams(scope), scope.at]);
}

export async function unlistedTimes(query: Query, scope: UnlistedScope, limit: number): Promise<string[]> {
  const rows = await query<{ at: string }>(
    `SELECT DISTINCT created_at AS at FROM bookings WHERE ${UNLISTED} ORDER BY created_at DESC LIMIT $6`,
    [...scopeParams(scope), limit],
  );
  return rows.map((r) => r.at);
}

/** How many bookings `markUnlisted` would mark, of how many it judges. */
export async function countUnlisted(
  query: Query,
  scope: UnlistedScope,
): Promise<{ unlisted: number; judged: number }> {
  const [row] = await query<{ unlisted: number; judged: number }>(
    `SELECT (count(*) FILTER (WHERE ${NOT_LISTED}))::integer AS unlisted, count(*)::integer AS judged
    FROM bookings WHERE ${JUDGED}`,
    scopeParams(scope),
  );
  return row ?? { unlisted: 0, judged: 0 };
}

async function count(query: Query, sql: string, params: readonly unknown[]): Promise<number> {
  const [row] = await query<{ n: number }>(sql, params);
  return row?.n ?? 0;
}
