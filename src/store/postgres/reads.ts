/** The port's reads and reconcile's marks and counts in Postgres: the twins of ../reads.ts and ../reconcile-writes.ts. */
import type { StreamState, WalkProgress } from "../../sync/ports.js";
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

async function count(query: Query, sql: string, params: readonly unknown[]): Promise<number> {
  const [row] = await query<{ n: number }>(sql, params);
  return row?.n ?? 0;
}
