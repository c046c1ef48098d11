/**
 * The dictionary's operational tables: how the mirror was filled (`sync_runs`, `rejected_records`,
 * which analysts may read to judge it) and the worker's internal bookkeeping, which they should not.
 */

const UTC = "UTC ISO 8601 text with milliseconds";
const CHECKPOINT = "the newest `createdAt` known to be fully mirrored";

const syncRuns = {
  description:
    "One row per run of any kind, written at its start and completed at its end. `sync_health_v` " +
    "sums it up per kind and stream.",
  internal: false,
  columns: {
    id: { meaning: "Run id, in start order.", source: "Worker" },
    kind: { meaning: "`sync`, `details`, `backfill` or `reconcile`.", source: "Worker" },
    stream: {
      meaning:
        "The stream it walked, e.g. `feed`, `feed:IN`, `feed:LC`, `backfill`, `backfill:<platform>`, `reconcile`.",
      source: "Worker",
    },
    started_at: { meaning: `When the run started, ${UTC}.`, source: "Worker" },
    finished_at: { meaning: `When the run ended, ${UTC}; NULL while running.`, source: "Worker" },
    status: {
      meaning:
        "`running`, `success`, `failed`, `aborted`, or `interrupted` (left running by a process that died; " +
        "marked by the next writer).",
      source: "Worker",
    },
    pages: { meaning: "Pages read.", source: "Worker" },
    requests: { meaning: "HTTP requests made, retries included.", source: "Worker" },
    retries: { meaning: "Requests that were retries.", source: "Worker" },
    bookings_new: { meaning: "Bookings added to the mirror.", source: "Worker" },
    bookings_updated: { meaning: "Stored bookings whose record changed.", source: "Worker" },
    bookings_unchanged: { meaning: "Stored bookings read again with nothing changed.", source: "Worker" },
    rejects: { meaning: "Records that failed validation and were quarantined.", source: "Worker" },
    checkpoint_before: {
      meaning: `The stream's checkpoint (${CHECKPOINT}) at the start, ${UTC}.`,
      source: "Worker",
    },
    checkpoint_after: { meaning: `The stream's checkpoint at the end, ${UTC}.`, source: "Worker" },
    error: {
      meaning: "Why the run failed or stopped, or a note; NULL on a clean success.",
      source: "Worker",
    },
    source_total: {
      meaning: "The source's booking total, when a drift check ran.",
      source: "`pagination.total` of List Bookings",
    },
    local_total: {
      meaning: "The mirror's bookings not marked missing, counted at the same drift check.",
      source: "Worker",
    },
    gaps_found: { meaning: "Gaps the repair found by position in the mirror, and read.", source: "Worker" },
    bookings_repaired: {
      meaning: "Bookings the repair added: ones an earlier pass had missed.",
      source: "Worker",
    },
  },
};

const rejectedRecords = {
  description:
    "Records that failed validation, quarantined instead of stored; each distinct record is kept once.",
  internal: false,
  columns: {
    id: { meaning: "Row id.", source: "Worker" },
    run_id: { meaning: "The run that first saw it (`sync_runs.id`), when known.", source: "Worker" },
    endpoint: { meaning: "`feed` (Fetch Recent Bookings) or `list` (List Bookings).", source: "Worker" },
    booking_id: { meaning: "The booking's identifier, when the record had a usable one.", source: "`_id`" },
    created_at: {
      meaning: `When the booking was created, ${UTC}, when the record had a valid one.`,
      source: "`createdAt`, converted to UTC",
    },
    reason: { meaning: "Why it was rejected, naming the field.", source: "Worker" },
    raw_json: {
      meaning:
        "The record as received (its first 1,000 characters when too large to read), with personal fields " +
        "treated as `SYNC_PERSONAL_DATA` says.",
      source: "The whole record",
    },
    raw_sha256: {
      meaning: "SHA-256 of `raw_json`, hex: seeing the same bad record twice adds nothing.",
      source: "Worker",
    },
    first_seen_at: { meaning: `When it was first quarantined, ${UTC}.`, source: "Worker" },
  },
};

const syncState = {
  description: "One row per stream: its checkpoint and the unfinished walk a restart resumes.",
  internal: true,
  columns: {
    stream: {
      meaning: "The stream, e.g. `feed`, `feed:IN`, `feed:LC`, `backfill`, `backfill:<platform>`.",
      source: "Worker",
    },
    checkpoint: {
      meaning: `The newest \`createdAt\` known to be fully mirrored, ${UTC}; only ever moves forward.`,
      source: "Worker",
    },
    progress_json: { meaning: "The unfinished walk, as JSON; NULL when none.", source: "Worker" },
    updated_at: { meaning: `When the row last changed, ${UTC}.`, source: "Worker" },
  },
};

const leases = {
  description: "Named leases for the single-writer rule; a lease past `expires_at` may be taken over.",
  internal: true,
  columns: {
    name: { meaning: "The lease's name.", source: "Worker" },
    holder: { meaning: "`host:pid:random`, unique per process and start.", source: "Worker" },
    pid: { meaning: "The holder's process id.", source: "Worker" },
    hostname: { meaning: "The holder's host name.", source: "Worker" },
    acquired_at: { meaning: `When the lease was taken, ${UTC}.`, source: "Worker" },
    heartbeat_at: { meaning: `When the holder last renewed it, ${UTC}.`, source: "Worker" },
    expires_at: { meaning: `When it may be taken over unless renewed, ${UTC}.`, source: "Worker" },
  },
};

const drizzleMigrations = {
  description: "The migrations applied to this file, kept by drizzle-orm's migrator.",
  internal: true,
  columns: {
    id: { meaning: "Row id.", source: "drizzle-orm" },
    hash: { meaning: "SHA-256 of the migration's SQL.", source: "drizzle-orm" },
    created_at: {
      meaning:
        "When the migration was generated (`drizzle/meta/_journal.json`), milliseconds since 1970; not when applied.",
      source: "drizzle-orm",
    },
  },
};

const sqliteSequence = {
  description: "SQLite's own: the last id handed out by each AUTOINCREMENT table.",
  internal: true,
  columns: {
    name: { meaning: "The table.", source: "SQLite" },
    seq: { meaning: "The largest id it has used.", source: "SQLite" },
  },
};

/** The operational tables, those an analyst may read first, in the order docs/schema.md lists them. */
export const OPERATIONAL_TABLES = {
  sync_runs: syncRuns,
  rejected_records: rejectedRecords,
  sync_state: syncState,
  leases,
  __drizzle_migrations: drizzleMigrations,
  sqlite_sequence: sqliteSequence,
};
