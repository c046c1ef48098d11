/**
 * The feed's hot path: summaries upserted with statements prepared once, run row by row inside one
 * transaction together with the walk's progress (invariant 3: rows and progress commit together).
 * Per-row prepared statements beat multi-row inserts or per-row query building several times over,
 * and positional values bind faster than named objects.
 *
 * Each row is inserted first and compared only when its `_id` is already stored: a cold or
 * incremental sync is almost all new rows, for which a lookup first is a wasted index descent.
 * The lookback's re-reads, the minority, pay one refused insert before the comparison.
 *
 * The work is split in two so it can run on two threads (writer-thread.ts): `toFeedRows` turns a
 * batch into plain values (JSON text and column values) where the records are, and the
 * statements write them where the connection is.
 */
import type Database from "better-sqlite3";
import type { FeedBatch, UpsertCounts, WalkProgress } from "../sync/ports.js";
import type { PersonalData } from "./personal-data.js";
import { type Param, pushSummaryValues, recordText, SUMMARY_COLUMNS, sameRecordJson } from "./rows.js";
import type { Reject, StateWriter } from "./state.js";

/** A `FeedBatch` reduced to what SQLite binds: plain data, cheap to hand to another thread. */
export interface FeedRows {
  stream: string;
  /** One per booking: `_id`, booking type, the summary columns in `SUMMARY_COLUMNS` order, raw JSON. */
  rows: Param[][];
  rejects: Reject[];
  walk: WalkProgress | null;
  checkpoint: string | undefined;
  syncedAt: string;
}

// Positions in a row of `FeedRows.rows`.
const ID = 0;
const TYPE = 1;
const FIRST_COLUMN = 2;
const JSON_TEXT = FIRST_COLUMN + SUMMARY_COLUMNS.length;

const columns = SUMMARY_COLUMNS.join(", ");
const marks = SUMMARY_COLUMNS.map(() => "?").join(", ");
// The summary view carries no sender email (contract 2.6): keep the one the full view gave.
const assignments = SUMMARY_COLUMNS.map((c) =>
  c === "sender_email" ? `${c} = coalesce(?, ${c})` : `${c} = ?`,
).join(", ");

interface Stored {
  json: string | null;
  bookingType: string | null;
  missingSince: string | null;
}

/**
 * The values a batch binds; a record's JSON is its text as received, decoded here (`recordText`).
 * With a `personal` policy (SYNC_PERSONAL_DATA hash or drop), its personal fields are replaced
 * here, in columns, JSON and rejects alike, before either thread stores anything.
 */
export function toFeedRows(batch: FeedBatch, personal?: PersonalData): FeedRows {
  const bookingType = batch.bookingType ?? null;
  const rows = batch.bookings.map((b) => {
    const row: Param[] = [b.id, bookingType];
    pushSummaryValues(row, b.createdAt, b.record);
    if (personal) {
      personal.protectColumns(row, FIRST_COLUMN);
      row.push(personal.recordJson(b.json, b.raw));
    } else row.push(recordText(b.json, b.raw));
    return row;
  });
  const { stream, walk, checkpoint, syncedAt } = batch;
  const rejects = personal ? batch.rejects.map(personal.protectReject) : batch.rejects;
  return { stream, rows, rejects, walk, checkpoint, syncedAt };
}

/** The feed's statements on one connection; the caller holds the transaction. */
export interface FeedStatements {
  /** Stores the rows and quarantines the rejects of `part`, adding to `counts`. */
  write(part: FeedRows, counts: UpsertCounts): void;
  /** Records the walk's progress (and the checkpoint, when it has one) as of `part`. */
  progress(part: FeedRows): void;
}

/** Counts with nothing in them yet. */
export function noCounts(): UpsertCounts {
  return { inserted: 0, updated: 0, unchanged: 0, rejected: 0 };
}

/**
 * Prepares the feed's statements. A summary write never touches the detail columns;
 * `missing_since` is cleared whenever a booking is seen again.
 */
export function feedStatements(db: Database.Database, state: StateWriter): FeedStatements {
  const insert = db.prepare(`
    INSERT INTO bookings (id, booking_type, ${columns}, summary_json, first_seen_at, summary_synced_at)
    VALUES (?, ?, ${marks}, ?, ?, ?)
    ON CONFLICT (id) DO NOTHING`);
  const select = db.prepare<[string], Stored>(
    "SELECT summary_json AS json, booking_type AS bookingType, missing_since AS missingSince FROM bookings WHERE id = ?",
  );
  const update = db.prepare(`
    UPDATE bookings SET ${assignments},
      booking_type = coalesce(?, booking_type),
      summary_json = ?, summary_synced_at = ?, missing_since = NULL
    WHERE id = ?`);
  // Unchanged rows: still learn the booking type from a type-scoped stream and that the booking is back.
  const touch = db.prepare(
    "UPDATE bookings SET missing_since = NULL, booking_type = coalesce(?, booking_type) WHERE id = ?",
  );

  /** Stores one row; returns which count it adds to. */
  const upsert = (row: Param[], syncedAt: string): "inserted" | "updated" | "unchanged" => {
    if (insert.run(row, syncedAt, syncedAt).changes > 0) return "inserted";
    const id = row[ID] as string;
    const bookingType = row[TYPE] ?? null;
    const json = row[JSON_TEXT] as string;
    // Present: the insert was refused because this `_id` is stored.
    const stored = select.get(id) as Stored;
    if (sameRecordJson(stored.json, json)) {
      const learnsType = bookingType !== null && stored.bookingType !== bookingType;
      if (stored.missingSince !== null || learnsType) touch.run(bookingType, id);
      return "unchanged";
    }
    update.run(row.slice(FIRST_COLUMN, JSON_TEXT), bookingType, json, syncedAt, id);
    return "updated";
  };

  return {
    write(part, counts) {
      for (const row of part.rows) counts[upsert(row, part.syncedAt)]++;
      state.insertRejects(part.rejects, "feed", null, part.syncedAt);
      counts.rejected += part.rejects.length;
    },
    progress(part) {
      state.writeState(part.stream, part.walk, part.checkpoint, part.syncedAt);
    },
  };
}

/** Stores a `FeedRows` and its progress in one transaction on this connection. */
export function feedRowWriter(db: Database.Database, state: StateWriter): (batch: FeedRows) => UpsertCounts {
  const statements = feedStatements(db, state);
  const commit = db.transaction((batch: FeedRows): UpsertCounts => {
    const counts = noCounts();
    statements.write(batch, counts);
    statements.progress(batch);
    return counts;
  });
  return (batch) => commit.immediate(batch);
}

/** `commitFeedBatch` on this connection: both halves, in the caller's thread. */
export function feedWriter(
  db: Database.Database,
  state: StateWriter,
  personal?: PersonalData,
): (batch: FeedBatch) => UpsertCounts {
  const write = feedRowWriter(db, state);
  return (batch) => write(toFeedRows(batch, personal));
}
