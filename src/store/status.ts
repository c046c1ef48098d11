/**
 * What `booking-sync status` (and later the daemon's status page) shows: the mirror's size, counts,
 * freshness, checkpoints, last runs, rejects and drift, read in one snapshot from any connection.
 */
import { statSync } from "node:fs";
import type Database from "better-sqlite3";

/** The mirror's state as of `at`; times are ISO 8601 UTC, ages whole seconds (never negative). */
export interface Status {
  /** When it was read. */
  at: string;
  database: {
    path: string;
    /** Size of the database file, bytes (0 when there is no file, e.g. in memory). */
    bytes: number;
    /** Size of its -wal file, bytes: pages written since the last checkpoint (0 when absent). */
    walBytes: number;
  };
  bookings: {
    /** Every row, including those the source no longer serves. */
    total: number;
    /** Rows whose full record was read (`detail_synced_at` set). */
    withDetails: number;
    /** Rows reconcile marked as no longer served (`missing_since` set). */
    missing: number;
  };
  /** The last successful `sync` run: the mirror is as fresh as its end. */
  lastSuccess: { runId: number; finishedAt: string; ageSeconds: number } | null;
  /** One per row of `sync_state`, by stream name. */
  streams: StreamStatus[];
  /** The newest runs of any kind, newest first. */
  runs: RunStatus[];
  /** Rows in `rejected_records`: source records that failed validation, kept aside. */
  rejects: number;
  /** The newest drift check (a run with `source_total`); null before the first. */
  drift: DriftStatus | null;
}

export interface StreamStatus {
  stream: string;
  /** Newest `createdAt` known to be fully mirrored; null before the stream's first complete walk. */
  checkpoint: string | null;
  /** Seconds from the checkpoint to `at`: how old the newest mirrored booking of the stream is. */
  checkpointAgeSeconds: number | null;
  /** Whether an unfinished walk or pass is stored (the next run resumes it). */
  inProgress: boolean;
  /** When the stream's row last changed. */
  updatedAt: string;
}

export interface RunStatus {
  id: number;
  kind: string;
  stream: string | null;
  /** running, success, failed, aborted or interrupted. */
  status: string;
  startedAt: string;
  finishedAt: string | null;
  /** null while running. */
  durationSeconds: number | null;
  new: number;
  updated: number;
  unchanged: number;
  rejects: number;
  error: string | null;
}

export interface DriftStatus {
  runId: number;
  stream: string | null;
  /** When the check's run ended (its start while it still runs). */
  at: string;
  /** The source's total, as `list-bookings` reported it. */
  sourceTotal: number;
  /** The mirror's matching count at that moment. */
  localTotal: number;
  /** sourceTotal - localTotal: positive when the mirror is short. */
  difference: number;
}

/** How many runs `runs` lists. */
export const STATUS_RUNS = 5;

/** Whether `db` holds booking-sync's tables (a file another program made, or an empty one, does not). */
export function hasMirrorTables(db: Database.Database): boolean {
  const names = ["bookings", "sync_state", "sync_runs", "rejected_records"];
  const found = db
    .prepare(`SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN (${names.map(() => "?")})`)
    .pluck()
    .get(...names) as number;
  return found === names.length;
}

/** Reads the status in one read transaction, so a sync writing meanwhile cannot mix two states. */
export function readStatus(db: Database.Database, now: Date): Status {
  return db.transaction(() => ({
    at: now.toISOString(),
    database: { path: db.name, bytes: fileBytes(db.name), walBytes: fileBytes(`${db.name}-wal`) },
    bookings: db
      .prepare(`SELECT count(*) AS total, count(detail_synced_at) AS withDetails,
        count(missing_since) AS missing FROM bookings`)
      .get() as Status["bookings"],
    lastSuccess: lastSuccess(db, now),
    streams: streams(db, now),
    runs: recentRuns(db),
    rejects: db.prepare("SELECT count(*) FROM rejected_records").pluck().get() as number,
    drift: drift(db),
  }))();
}

function lastSuccess(db: Database.Database, now: Date): Status["lastSuccess"] {
  const row = db
    .prepare<[], { runId: number; finishedAt: string }>(`
      SELECT id AS runId, finished_at AS finishedAt FROM sync_runs
      WHERE kind = 'sync' AND status = 'success' AND finished_at IS NOT NULL
      ORDER BY finished_at DESC, id DESC LIMIT 1`)
    .get();
  return row ? { ...row, ageSeconds: ageSeconds(row.finishedAt, now) as number } : null;
}

function streams(db: Database.Database, now: Date): StreamStatus[] {
  const rows = db
    .prepare<[], { stream: string; checkpoint: string | null; progress: number; updatedAt: string }>(`
      SELECT stream, checkpoint, progress_json IS NOT NULL AS progress, updated_at AS updatedAt
      FROM sync_state ORDER BY stream`)
    .all();
  return rows.map((r) => ({
    stream: r.stream,
    checkpoint: r.checkpoint,
    checkpointAgeSeconds: ageSeconds(r.checkpoint, now),
    inProgress: r.progress === 1,
    updatedAt: r.updatedAt,
  }));
}

function recentRuns(db: Database.Database): RunStatus[] {
  const rows = db
    .prepare<[number], Omit<RunStatus, "durationSeconds">>(`
      SELECT id, kind, stream, status, started_at AS startedAt, finished_at AS finishedAt,
        bookings_new AS new, bookings_updated AS updated, bookings_unchanged AS unchanged, rejects, error
      FROM sync_runs ORDER BY id DESC LIMIT ?`)
    .all(STATUS_RUNS);
  // Keys in the interface's order: `--json` prints them as built.
  return rows.map(({ id, kind, stream, status, startedAt, finishedAt, ...counts }) => ({
    id,
    kind,
    stream,
    status,
    startedAt,
    finishedAt,
    durationSeconds: finishedAt === null ? null : (Date.parse(finishedAt) - Date.parse(startedAt)) / 1000,
    ...counts,
  }));
}

function drift(db: Database.Database): DriftStatus | null {
  const row = db
    .prepare<[], Omit<DriftStatus, "difference">>(`
      SELECT id AS runId, stream, coalesce(finished_at, started_at) AS at,
        source_total AS sourceTotal, coalesce(local_total, 0) AS localTotal
      FROM sync_runs WHERE source_total IS NOT NULL ORDER BY id DESC LIMIT 1`)
    .get();
  return row ? { ...row, difference: row.sourceTotal - row.localTotal } : null;
}

/** Whole seconds from `iso` to `now`; null for no time. */
function ageSeconds(iso: string | null, now: Date): number | null {
  if (iso === null) return null;
  const ms = now.getTime() - Date.parse(iso);
  return Number.isNaN(ms) ? null : Math.max(0, Math.round(ms / 1000));
}

function fileBytes(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}
