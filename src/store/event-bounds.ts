/**
 * Where the events stream stands, for a consumer to check its place against (`EventStore.bounds`):
 * the oldest event kept, the newest id ever given (which pruning does not lower: the database's
 * own counter remembers it), and the stream's identity. One snapshot, SQL per database.
 */
import type { StreamBounds } from "../events/ports.js";
import { isMissingTable, unlessFails } from "./savepoint-read.js";
import type { MirrorReader } from "./snapshot.js";

/**
 * The newest id given, by each database's counter: SQLite's AUTOINCREMENT keeps it in
 * `sqlite_sequence`; PostgreSQL's identity sequence shows it in `pg_sequences` (NULL when never
 * used). A PostgreSQL user who may not read the sequence cannot know it (the newest id kept may
 * since have been pruned): NULL, and no place is judged by it.
 */
const ASSIGNED = {
  sqlite: `max(coalesce(max(id), 0),
    coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'booking_events'), 0))`,
  postgres: `CASE WHEN has_sequence_privilege(pg_get_serial_sequence('booking_events', 'id'), 'SELECT, USAGE')
    THEN greatest(coalesce(max(id), 0), coalesce((SELECT last_value FROM pg_sequences
      WHERE format('%I.%I', schemaname, sequencename) = pg_get_serial_sequence('booking_events', 'id')), 0)) END`,
};

/** SQLSTATE 42501: a role granted the tables before `event_stream` existed may not read it. */
const isRefused = (err: unknown) =>
  isMissingTable(err) || (err as { code?: unknown } | null)?.code === "42501";

/** The stream's bounds as of `db`'s snapshot, on SQLite or PostgreSQL. */
export async function readBounds(db: MirrorReader, postgres: boolean): Promise<StreamBounds> {
  const [ids] = await db.all<{ first: unknown; assigned: unknown }>(
    `SELECT coalesce(min(id), 0) AS first, ${ASSIGNED[postgres ? "postgres" : "sqlite"]} AS assigned
       FROM booking_events`,
  );
  // A mirror opened read only is never migrated: one made before the identity has none yet.
  const rows = await unlessFails(
    db,
    "event_stream",
    () => db.all<{ id: string | null }>("SELECT min(id) AS id FROM event_stream"),
    isRefused,
  );
  return {
    first: Number(ids?.first ?? 0),
    assigned: ids?.assigned === null ? null : Number(ids?.assigned ?? 0),
    stream: rows?.[0]?.id ?? null,
  };
}
