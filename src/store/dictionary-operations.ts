/**
 * The dictionary's operational tables: how the mirror was filled (`sync_runs`, `rejected_records`,
 * which analysts may read to judge it) and the worker's internal bookkeeping, which they should not.
 */
import { by, described, type RelationEntry, UTC, worker } from "./dictionary-entry.js";
import * as schema from "./schema.js";

const STREAMS = "`feed`, `feed:IN`, `feed:LC`, `backfill`, `backfill:<platform>`";
const CHECKPOINT = "the newest `createdAt` known to be fully mirrored";

const syncRuns = described(schema.syncRuns, {
  description:
    "One row per run of any kind, written at its start and completed at its end. `sync_health_v` " +
    "sums it up per kind and stream.",
  columns: {
    id: worker("Run id, in start order."),
    kind: worker("`sync`, `details`, `backfill` or `reconcile`."),
    stream: worker(`The stream it walked, e.g. ${STREAMS}, \`reconcile\`.`),
    startedAt: worker(`When the run started, ${UTC}.`),
    finishedAt: worker(`When the run ended, ${UTC}; NULL while running.`),
    status: worker(
      "`running`, `success`, `failed`, `aborted`, or `interrupted` (left running by a process that died; " +
        "marked by the next writer).",
    ),
    pages: worker("Pages read."),
    requests: worker("HTTP requests made, retries included."),
    retries: worker("Requests that were retries."),
    bookingsNew: worker("Bookings added to the mirror."),
    bookingsUpdated: worker("Stored bookings whose record changed."),
    bookingsUnchanged: worker("Stored bookings read again with nothing changed."),
    rejects: worker("Records that failed validation and were quarantined."),
    checkpointBefore: worker(`The stream's checkpoint (${CHECKPOINT}) at the start, ${UTC}.`),
    checkpointAfter: worker(`The stream's checkpoint at the end, ${UTC}.`),
    error: worker("Why the run failed or stopped, or a note; NULL on a clean success."),
    sourceTotal: {
      meaning: "The source's booking total, when a drift check ran.",
      source: "`pagination.total` of List Bookings",
    },
    localTotal: worker("The mirror's bookings not marked missing, counted at the same drift check."),
    gapsFound: worker("Gaps the repair found by position in the mirror, and read."),
    bookingsRepaired: worker("Bookings the repair added: ones an earlier pass had missed."),
  },
});

const rejectedRecords = described(schema.rejectedRecords, {
  description:
    "Records that failed validation, quarantined instead of stored; each distinct record is kept once.",
  columns: {
    id: worker("Row id."),
    runId: worker("The run that first saw it (`sync_runs.id`), when known."),
    endpoint: worker("`feed` (Fetch Recent Bookings) or `list` (List Bookings)."),
    bookingId: { meaning: "The booking's identifier, when the record had a usable one.", source: "`_id`" },
    createdAt: {
      meaning: `When the booking was created, ${UTC}, when the record had a valid one.`,
      source: "`createdAt`, converted to UTC",
    },
    reason: worker("Why it was rejected, naming the field."),
    rawJson: {
      meaning:
        "The record as received (its first 1,000 characters when too large to read), with personal fields " +
        "treated as `SYNC_PERSONAL_DATA` says.",
      source: "The whole record",
    },
    rawSha256: worker("SHA-256 of `raw_json`, hex: seeing the same bad record twice adds nothing."),
    firstSeenAt: worker(`When it was first quarantined, ${UTC}.`),
  },
});

const syncState = described(schema.syncState, {
  description: "One row per stream: its checkpoint and the unfinished walk a restart resumes.",
  internal: true,
  columns: {
    stream: worker(`The stream, e.g. ${STREAMS}.`),
    checkpoint: worker(
      `The newest \`createdAt\` known to be fully mirrored, ${UTC}; only ever moves forward.`,
    ),
    progressJson: worker("The unfinished walk, as JSON; NULL when none."),
    updatedAt: worker(`When the row last changed, ${UTC}.`),
  },
});

const leases = described(schema.leases, {
  description: "Named leases for the single-writer rule; a lease past `expires_at` may be taken over.",
  internal: true,
  columns: {
    name: worker("The lease's name."),
    holder: worker("`host:pid:random`, unique per process and start."),
    pid: worker("The holder's process id."),
    hostname: worker("The holder's host name."),
    acquiredAt: worker(`When the lease was taken, ${UTC}.`),
    heartbeatAt: worker(`When the holder last renewed it, ${UTC}.`),
    expiresAt: worker(`When it may be taken over unless renewed, ${UTC}.`),
  },
});

const drizzle = by("drizzle-orm");
const drizzleMigrations = {
  description: "The migrations applied to this file, kept by drizzle-orm's migrator.",
  internal: true,
  columns: {
    id: drizzle("Row id."),
    hash: drizzle("SHA-256 of the migration's SQL."),
    created_at: drizzle(
      "When the migration was generated (`drizzle/meta/_journal.json`), milliseconds since 1970; not when applied.",
    ),
  },
};

const sqlite = by("SQLite");
const sqliteSequence = {
  description: "SQLite's own: the last id handed out by each AUTOINCREMENT table.",
  internal: true,
  columns: {
    name: sqlite("The table."),
    seq: sqlite("The largest id it has used."),
  },
};

/** The operational tables, those an analyst may read first, in the order docs/schema.md lists them. */
export const OPERATIONAL_TABLES: Record<string, RelationEntry> = Object.fromEntries([
  syncRuns,
  rejectedRecords,
  syncState,
  leases,
  ["__drizzle_migrations", drizzleMigrations],
  ["sqlite_sequence", sqliteSequence],
]);
