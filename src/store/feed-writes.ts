/**
 * The feed's hot path: summaries upserted row by row with statements prepared once, with the page's
 * progress (invariant 3). Each row is inserted first and compared only when already stored: a sync
 * is almost all new rows.
 */
import type Database from "better-sqlite3";
import type { PageWrite, Progress, Reject, UpsertCounts } from "../sync/ports.js";
import { type changeRecorder, countOfUpdate, trackedIn } from "./changes.js";
import type { PersonalData } from "./personal-data.js";
import {
  KEPT_IF_NULL,
  keyedBookings,
  type Param,
  pushSummaryValues,
  quarantined,
  SUMMARY_COLUMNS,
  sameRecordJson,
} from "./rows.js";
import type { StateWriter } from "./state.js";

/** A page of the feed. */
export type FeedWrite = Extract<PageWrite, { source: "feed" }>;

/** A feed page as the values SQLite binds. */
export interface FeedRows {
  /** One per booking: `_id`, booking type, the summary columns in `SUMMARY_COLUMNS` order, JSON, problems. */
  rows: Param[][];
  rejects: Reject[];
  progress: Progress | undefined;
  syncedAt: string;
}

// Positions in a row of `FeedRows.rows`.
const ID = 0;
const TYPE = 1;
const FIRST_COLUMN = 2;
const JSON_TEXT = FIRST_COLUMN + SUMMARY_COLUMNS.length;
const PROBLEMS = JSON_TEXT + 1;

const columns = SUMMARY_COLUMNS.join(", ");
const marks = SUMMARY_COLUMNS.map(() => "?").join(", ");
const assignments = SUMMARY_COLUMNS.map((c) =>
  KEPT_IF_NULL.has(c) ? `${c} = coalesce(?, ${c})` : `${c} = ?`,
).join(", ");

interface Stored extends Record<string, unknown> {
  json: string | null;
  bookingType: string | null;
  missingSince: string | null;
}

const TRACKED = trackedIn(SUMMARY_COLUMNS);

/** The values a page binds; a `personal` policy replaces personal fields in columns, JSON and rejects. */
export function toFeedRows(page: FeedWrite, personal?: PersonalData): FeedRows {
  const bookingType = page.bookingType ?? null;
  const rows = keyedBookings(page.records, page.rejects).map((b) => {
    const row: Param[] = [b.id, bookingType];
    pushSummaryValues(row, b.createdAt, b.record);
    if (personal) {
      personal.protectColumns(row, FIRST_COLUMN);
      row.push(personal.recordJson(b.raw));
    } else row.push(JSON.stringify(b.raw));
    row.push(b.problems);
    return row;
  });
  const rejects = quarantined(page.rejects);
  return {
    rows,
    rejects: personal ? rejects.map(personal.protectReject) : rejects,
    progress: page.progress,
    syncedAt: page.syncedAt,
  };
}

/** Counts with nothing in them yet. */
export function noCounts(): UpsertCounts {
  return { inserted: 0, updated: 0, unchanged: 0, rejected: 0 };
}

/** Prepares the feed's statements; the writer runs inside the caller's transaction. */
export function feedWriter(
  db: Database.Database,
  state: StateWriter,
  recordChanges: ReturnType<typeof changeRecorder>,
): (part: FeedRows) => UpsertCounts {
  const insert = db.prepare(`
    INSERT INTO bookings (id, booking_type, ${columns}, summary_json, summary_problems, first_seen_at,
      summary_synced_at)
    VALUES (?, ?, ${marks}, ?, ?, ?, ?)
    ON CONFLICT (id) DO NOTHING`);
  const select = db.prepare<[string], Stored>(
    `SELECT summary_json AS json, booking_type AS bookingType, missing_since AS missingSince,
      ${TRACKED.map(([c]) => c).join(", ")} FROM bookings WHERE id = ?`,
  );
  const update = db.prepare(`
    UPDATE bookings SET ${assignments},
      booking_type = coalesce(?, booking_type),
      summary_json = ?, summary_problems = ?, summary_synced_at = ?, missing_since = NULL
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
    update.run(row.slice(FIRST_COLUMN, JSON_TEXT), bookingType, json, row[PROBLEMS], syncedAt, id);
    return countOfUpdate(
      stored.json,
      recordChanges(id, TRACKED, stored, row, FIRST_COLUMN, syncedAt, row[PROBLEMS] === null),
    );
  };

  return (part) => {
    const counts = noCounts();
    for (const row of part.rows) counts[upsert(row, part.syncedAt)]++;
    state.insertRejects(part.rejects, "feed", null, part.syncedAt);
    counts.rejected = part.rejects.length;
    if (part.progress) state.writeProgress(part.progress, part.syncedAt);
    return counts;
  };
}
