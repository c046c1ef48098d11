/**
 * What `booking-sync status` and the daemon's status page show: the mirror's size, counts,
 * freshness, checkpoints, last runs, rejects, drift and the events stream, read in one snapshot of
 * either database.
 */
import type Database from "better-sqlite3";
import { DETAILS_STREAM } from "../sync/list/details.js";
import { WITHHELD_STREAM, type WithheldMarks } from "../sync/list/missing-share.js";
import { isSourceRecord, SOURCE_STREAM, type SourceRecord } from "../sync/source.js";
import { type EventsStatus, readEventsStatus } from "./events-status.js";
import { type FailingStatus, failingOf, type SyncRunEnd } from "./failing.js";
import { type FillStatus, fillStatus, parseJson } from "./fill-status.js";
import type { DatabaseStatus, MirrorReader } from "./snapshot.js";

/** The mirror's state as of `at`; times are ISO 8601 UTC, ages whole seconds (never negative). */
export interface Status {
  /** When it was read. */
  at: string;
  database: DatabaseStatus;
  bookings: {
    /** Every row, including those the source no longer serves. */
    total: number;
    /** Rows whose full record was read (`detail_synced_at` set). */
    withDetails: number;
    /** Rows reconcile marked as no longer served (`missing_since` set). */
    missing: number;
    /** Rows stored with a note of what was wrong with them (`summary_problems` or `detail_problems`). */
    withProblems: number;
    /** Rows without details that a details pass did not find on the list (`details_seek_after` set). */
    detailsNotFound: number;
  };
  /** The last successful `sync` run: the mirror is as fresh as its end. */
  lastSuccess: { runId: number; finishedAt: string; ageSeconds: number } | null;
  /** The `sync` runs that failed since the last success; null when none has. */
  failing: FailingStatus | null;
  /** One per row of `sync_state`, by stream name. */
  streams: StreamStatus[];
  /** The newest runs of any kind, newest first. */
  runs: RunStatus[];
  /** Rows in `rejected_records`: source records that failed validation, kept aside. */
  rejects: number;
  /** The newest drift check (a run with `source_total`); null before the first. */
  drift: DriftStatus | null;
  /** The source the mirror mirrors; `unreadable` when this version did not write it (edited by hand). */
  source: SourceRecord | { unreadable: true } | null;
  /** Missing marks a reconcile withheld, waiting for `reconcile --apply-missing`; null when none are. */
  reconcileWithheld: WithheldMarks | null;
  /** The booking events stream and its webhook's delivery; null when the mirror predates its tables. */
  events: EventsStatus | null;
}

/** What `status` shows of the source and of withheld marks. */
export type SourceState = Pick<Status, "source" | "reconcileWithheld">;

export interface StreamStatus {
  stream: string;
  /** Newest `createdAt` known to be fully mirrored; null before the stream's first complete walk. */
  checkpoint: string | null;
  /** Seconds from the checkpoint to `at`: how old the newest mirrored booking of the stream is. */
  checkpointAgeSeconds: number | null;
  /**
   * Where the stream stands when it has no checkpoint time, in words: "none yet" for a feed walk
   * that has not finished, how many bookings lack details for the details pass; null otherwise.
   */
  note: string | null;
  /** Whether an unfinished walk or pass is stored (the next run resumes it). */
  inProgress: boolean;
  /** When the stream's row last changed. */
  updatedAt: string;
  /** The fill under way: how far it has got and when it should end; null when none is stored. */
  fill: FillStatus | null;
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

export { type FailingStatus, failingText } from "./failing.js";

const NO_BOOKINGS: Status["bookings"] = {
  total: 0,
  withDetails: 0,
  missing: 0,
  withProblems: 0,
  detailsNotFound: 0,
};

/** How many runs `runs` lists. */
export const STATUS_RUNS = 5;

/** The tables a mirror has, whichever database keeps it. */
export const MIRROR_TABLES = ["bookings", "sync_state", "sync_runs", "rejected_records"] as const;

/** Whether `db` holds booking-sync's tables (a file another program made, or an empty one, does not). */
export function hasMirrorTables(db: Database.Database): boolean {
  const sql = `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN (${MIRROR_TABLES.map(() => "?")})`;
  const found = db
    .prepare(sql)
    .pluck()
    .get(...MIRROR_TABLES);
  return found === MIRROR_TABLES.length;
}

/**
 * Reads the status through `db`, whose snapshot keeps a sync writing meanwhile from mixing two
 * states. Aliases are quoted, since PostgreSQL folds unquoted names to lower case.
 */
export async function readStatus(db: MirrorReader, now: Date): Promise<Status> {
  const [bookings] = await db.all<Status["bookings"]>(`
    SELECT count(*) AS total, count(detail_synced_at) AS "withDetails", count(missing_since) AS missing,
      count(CASE WHEN summary_problems IS NOT NULL OR detail_problems IS NOT NULL THEN 1 END) AS "withProblems",
      count(CASE WHEN details_seek_after IS NOT NULL AND detail_synced_at IS NULL THEN 1 END) AS "detailsNotFound"
    FROM bookings`);
  const [rejects] = await db.all<{ n: number }>("SELECT count(*) AS n FROM rejected_records");
  return {
    at: now.toISOString(),
    database: await db.database(),
    bookings: bookings ?? NO_BOOKINGS,
    lastSuccess: await lastSuccess(db, now),
    failing: await failing(db),
    streams: await streams(db, now, bookings ?? NO_BOOKINGS),
    runs: await recentRuns(db),
    rejects: rejects?.n ?? 0,
    drift: await drift(db),
    ...(await readSourceState(db)),
    events: await readEventsStatus(db, now),
  };
}

async function lastSuccess(db: MirrorReader, now: Date): Promise<Status["lastSuccess"]> {
  const [row] = await db.all<{ runId: number; finishedAt: string }>(`
    SELECT id AS "runId", finished_at AS "finishedAt" FROM sync_runs
    WHERE kind = 'sync' AND status = 'success' AND finished_at IS NOT NULL
    ORDER BY finished_at DESC, id DESC LIMIT 1`);
  return row ? { ...row, ageSeconds: ageSeconds(row.finishedAt, now) as number } : null;
}

// The newest failed runs the streak's same-error count reads; a longer outage counts in SQL.
const FAILING_ROWS = 100;

/**
 * The failing streak as `failingOf` judges it, over the sync runs since the newest success: the rule
 * ends a streak at every success, so the runs before it cannot change the result.
 */
async function failing(db: MirrorReader): Promise<FailingStatus | null> {
  const since = `kind = 'sync' AND id > coalesce(
    (SELECT max(id) FROM sync_runs WHERE kind = 'sync' AND status = 'success'), 0)`;
  const newest = await db.all<SyncRunEnd>(
    `SELECT status, started_at AS "startedAt", error FROM sync_runs
    WHERE ${since} AND status = 'failed' ORDER BY id DESC LIMIT ${FAILING_ROWS}`,
  );
  const streak = failingOf(newest.reverse());
  if (streak === null || newest.length < FAILING_ROWS) return streak;
  const [all] = await db.all<{ runs: number; first: string }>(
    `SELECT count(*) AS runs, min(started_at) AS first FROM sync_runs WHERE ${since} AND status = 'failed'`,
  );
  return { ...streak, runs: Number(all?.runs ?? streak.runs), since: all?.first ?? streak.since };
}

type StreamRow = Pick<StreamStatus, "stream" | "checkpoint" | "updatedAt"> & { progressJson: string | null };

async function streams(db: MirrorReader, now: Date, bookings: Status["bookings"]): Promise<StreamStatus[]> {
  const rows = await db.all<StreamRow>(
    `
    SELECT stream, checkpoint, progress_json AS "progressJson", updated_at AS "updatedAt"
    FROM sync_state WHERE stream NOT IN ($1, $2) ORDER BY stream`,
    // Records rather than a walk's position: shown as the source and the withheld marks.
    [SOURCE_STREAM, WITHHELD_STREAM],
  );
  return rows.map((r) => ({
    stream: r.stream,
    checkpoint: r.checkpoint,
    checkpointAgeSeconds: ageSeconds(r.checkpoint, now),
    note: r.checkpoint === null ? streamNote(r.stream, bookings) : null,
    inProgress: r.progressJson !== null,
    updatedAt: r.updatedAt,
    fill: fillStatus(r.progressJson, now),
  }));
}

/** A feed walk's position is a time; the details pass's is how many bookings it has left. */
function streamNote(stream: string, bookings: Status["bookings"]): string | null {
  if (stream === DETAILS_STREAM) {
    const lacking = bookings.total - bookings.withDetails;
    if (lacking === 0) return "every booking has details";
    const unfound = bookings.detailsNotFound;
    return `${lacking} bookings without details${unfound ? ` (${unfound} not found on the list: deleted at the source?)` : ""}`;
  }
  return /^feed(:|$)/.test(stream) ? "none yet" : null;
}

async function recentRuns(db: MirrorReader): Promise<RunStatus[]> {
  // The duration is selected empty where the interface has it, so `--json` prints keys in that order.
  const rows = await db.all<RunStatus>(
    `
    SELECT id, kind, stream, status, started_at AS "startedAt", finished_at AS "finishedAt",
      NULL AS "durationSeconds", bookings_new AS new, bookings_updated AS updated,
      bookings_unchanged AS unchanged, rejects, error
    FROM sync_runs ORDER BY id DESC LIMIT $1`,
    [STATUS_RUNS],
  );
  return rows.map((r) => ({
    ...r,
    durationSeconds:
      r.finishedAt === null ? null : (Date.parse(r.finishedAt) - Date.parse(r.startedAt)) / 1000,
  }));
}

async function drift(db: MirrorReader): Promise<DriftStatus | null> {
  const [row] = await db.all<Omit<DriftStatus, "difference">>(`
    SELECT id AS "runId", stream, coalesce(finished_at, started_at) AS at,
      source_total AS "sourceTotal", coalesce(local_total, 0) AS "localTotal"
    FROM sync_runs WHERE source_total IS NOT NULL ORDER BY id DESC LIMIT 1`);
  return row ? { ...row, difference: row.sourceTotal - row.localTotal } : null;
}

/** The two `sync_state` rows that hold records rather than a walk's position. */
async function readSourceState(db: MirrorReader): Promise<SourceState> {
  const rows = await db.all<{ stream: string; progress: string | null }>(
    "SELECT stream, progress_json AS progress FROM sync_state WHERE stream IN ($1, $2)",
    [SOURCE_STREAM, WITHHELD_STREAM],
  );
  const value = (stream: string): unknown => {
    const text = rows.find((r) => r.stream === stream)?.progress;
    return text ? parseJson(text) : null;
  };
  const source = value(SOURCE_STREAM);
  return {
    source: source === null ? null : isSourceRecord(source) ? source : { unreadable: true },
    reconcileWithheld: (value(WITHHELD_STREAM) ?? null) as WithheldMarks | null,
  };
}

/** Whole seconds from `iso` to `now`; null for no time. */
function ageSeconds(iso: string | null, now: Date): number | null {
  if (iso === null) return null;
  const ms = now.getTime() - Date.parse(iso);
  return Number.isNaN(ms) ? null : Math.max(0, Math.round(ms / 1000));
}

/** The fill stored as `stream`'s committed progress as of `at` (what /readyz shows); null when none. */
export async function readFill(db: MirrorReader, stream: string, at: Date): Promise<FillStatus | null> {
  const [row] = await db.all<{ progress: string | null }>(
    "SELECT progress_json AS progress FROM sync_state WHERE stream = $1",
    [stream],
  );
  return fillStatus(row?.progress ?? null, at);
}

/** Each stream's committed checkpoint (what /metrics shows as lag), read on the readers' connection. */
export async function readCheckpoints(db: MirrorReader): Promise<Record<string, string | null>> {
  const rows = await db.all<{ stream: string; checkpoint: string | null }>(
    "SELECT stream, checkpoint FROM sync_state",
  );
  return Object.fromEntries(rows.map((r) => [r.stream, r.checkpoint]));
}
