/**
 * The full view's writes (list-bookings), with a stale-write guard against older copies. Each booking
 * is inserted first and compared only when already stored: a backfill is almost all new rows.
 */
import type Database from "better-sqlite3";
import type { PageWrite, Progress, Reject, UpsertCounts } from "../sync/ports.js";
import { type changeRecorder, trackedIn } from "./changes.js";
import { noCounts } from "./feed-writes.js";
import { rowInserter, storedRows } from "./page-statements.js";
import type { PersonalData } from "./personal-data.js";
import {
  bookingTypeOf,
  childValues,
  DETAIL_COLUMNS,
  ITEM_COLUMNS,
  keyedBookings,
  PACKAGE_COLUMNS,
  type Param,
  pushDetailValues,
  pushSummaryValues,
  quarantined,
  SUMMARY_COLUMNS,
  sameRecordJson,
} from "./rows.js";
import type { StateWriter } from "./state.js";

/** A page of list-bookings. */
export type DetailWrite = Extract<PageWrite, { source: "list" }>;

/** A booking of `DetailRows`: its `bookings` values and its children's. */
export interface DetailRow {
  /** `_id`, booking type, the summary then the detail columns in `COLUMNS` order, raw JSON, problems. */
  values: Param[];
  /** `booking_packages` rows, in `PACKAGE_COLUMNS` order. */
  packages: Param[][];
  /** `booking_items` rows, in `ITEM_COLUMNS` order. */
  items: Param[][];
}

/** A list page as the values SQLite binds. */
export interface DetailRows {
  rows: DetailRow[];
  rejects: Reject[];
  syncedAt: string;
  listedBy: number | null;
  progress: Progress | undefined;
}

const COLUMNS = [...SUMMARY_COLUMNS, ...DETAIL_COLUMNS];
const TRACKED = trackedIn(COLUMNS);
// Positions in `DetailRow.values`.
const ID = 0;
const TYPE = 1;
const FIRST_COLUMN = 2;
const REMOTE_UPDATED_AT = FIRST_COLUMN + COLUMNS.indexOf("remote_updated_at");
const JSON_TEXT = FIRST_COLUMN + COLUMNS.length;
const PROBLEMS = JSON_TEXT + 1;

const marks = (n: number) => Array.from({ length: n }, () => "?").join(", ");

/** The values a page binds; with a `personal` policy, its personal fields replaced as in `toFeedRows`. */
export function toDetailRows(page: DetailWrite, personal?: PersonalData): DetailRows {
  const rows = keyedBookings(page.records, page.rejects).map((b): DetailRow => {
    const values: Param[] = [b.id, bookingTypeOf(b.record.type)];
    pushSummaryValues(values, b.createdAt, b.record);
    pushDetailValues(values, b.createdAt, b.record);
    if (personal) {
      personal.protectColumns(values, FIRST_COLUMN);
      values.push(personal.recordJson(b.raw));
    } else values.push(JSON.stringify(b.raw));
    values.push(b.problems);
    return { values, ...childValues(b.id, b.record) };
  });
  const { syncedAt, listedBy, progress } = page;
  const rejects = quarantined(page.rejects);
  return {
    rows,
    rejects: personal ? rejects.map(personal.protectReject) : rejects,
    syncedAt,
    listedBy: listedBy ?? null,
    progress,
  };
}

type Stored = { remote: string | null; json: string | null } & Record<string, unknown>;

/** Prepares the detail statements; the writer runs inside the caller's transaction. */
export function detailWriter(
  db: Database.Database,
  state: StateWriter,
  recordChanges: ReturnType<typeof changeRecorder>,
): (part: DetailRows) => UpsertCounts {
  // summary_json stays null: it holds only what the feed served, and the feed has not served this one yet.
  const insert = db.prepare(`
    INSERT INTO bookings (id, booking_type, ${COLUMNS.join(", ")}, detail_json, detail_problems,
      detail_synced_at, listed_by_run, first_seen_at, summary_synced_at)
    VALUES (?, ?, ${marks(COLUMNS.length)}, ?, ?, ?, ?, ?, ?)
    ON CONFLICT (id) DO NOTHING`);
  const columns = `remote_updated_at AS remote, detail_json AS json, ${TRACKED.map(([c]) => c).join(", ")}`;
  const storedOf = storedRows<Stored>(db, columns);
  const select = db.prepare<[string], Stored>(`SELECT ${columns} FROM bookings WHERE id = ?`);
  const update = db.prepare(`
    UPDATE bookings SET ${COLUMNS.map((c) => (c === "created_at" ? `${c} = coalesce(?, ${c})` : `${c} = ?`)).join(", ")},
      booking_type = coalesce(?, booking_type), detail_json = ?, detail_problems = ?, detail_synced_at = ?,
      listed_by_run = coalesce(?, listed_by_run), missing_since = NULL
    WHERE id = ?`);
  // Unchanged or stale rows were still served: not missing. Details just confirmed current leave the
  // details queue, or they would be re-read forever.
  const touch = db.prepare(`
    UPDATE bookings SET missing_since = NULL, listed_by_run = coalesce(@listedBy, listed_by_run),
      detail_synced_at = CASE WHEN summary_synced_at > detail_synced_at THEN @syncedAt ELSE detail_synced_at END
    WHERE id = @id AND (missing_since IS NOT NULL OR (@listedBy IS NOT NULL AND listed_by_run IS NOT @listedBy)
      OR summary_synced_at > detail_synced_at)`);
  const deletePackages = db.prepare("DELETE FROM booking_packages WHERE booking_id = ?");
  const deleteItems = db.prepare("DELETE FROM booking_items WHERE booking_id = ?");
  const insertPackages = rowInserter(db, "booking_packages", PACKAGE_COLUMNS);
  const insertItems = rowInserter(db, "booking_items", ITEM_COLUMNS);

  /**
   * Writes one booking; returns which count it adds to. `stored` is its row as the page found it,
   * undefined when it was not stored then or when this page already wrote it (a second copy of an
   * `_id` reads what the first wrote). Children go to `children`, written once the page's rows are.
   */
  const upsert = (
    row: DetailRow,
    part: DetailRows,
    found: Stored | undefined,
    children: Map<string, DetailRow>,
  ): "inserted" | "updated" | "unchanged" => {
    const { values } = row;
    const { syncedAt, listedBy } = part;
    const id = values[ID] as string;
    if (found === undefined && insert.run(values, syncedAt, listedBy, syncedAt, syncedAt).changes > 0) {
      children.set(id, row);
      return "inserted";
    }
    const json = values[JSON_TEXT] as string;
    const remote = values[REMOTE_UPDATED_AT];
    // Present: found with the page, or the insert was refused because this `_id` is stored.
    const stored = found ?? (select.get(id) as Stored);
    // ISO 8601 UTC text compares in time order; a payload without updatedAt cannot be judged stale.
    const stale = stored.remote !== null && remote !== null && stored.remote > (remote as string);
    if (stale || sameRecordJson(stored.json, json)) {
      touch.run({ id, listedBy, syncedAt });
      return "unchanged";
    }
    update.run(
      values.slice(FIRST_COLUMN, JSON_TEXT),
      values[TYPE],
      json,
      values[PROBLEMS],
      syncedAt,
      listedBy,
      id,
    );
    recordChanges(id, TRACKED, stored, values, FIRST_COLUMN, syncedAt, values[PROBLEMS] === null);
    deleteItems.run(id);
    deletePackages.run(id);
    // Replaces the children of a copy earlier in this page, not written yet.
    children.set(id, row);
    return "updated";
  };

  return (part) => {
    const counts = noCounts();
    const stored = storedOf(part.rows.map((r) => r.values[ID] as string));
    const children = new Map<string, DetailRow>();
    for (const row of part.rows) {
      const id = row.values[ID] as string;
      counts[upsert(row, part, stored.get(id), children)]++;
      stored.delete(id);
    }
    insertPackages([...children.values()].flatMap((r) => r.packages));
    insertItems([...children.values()].flatMap((r) => r.items));
    state.insertRejects(part.rejects, "list", part.listedBy, part.syncedAt);
    counts.rejected = part.rejects.length;
    if (part.progress) state.writeProgress(part.progress, part.syncedAt);
    return counts;
  };
}
