/**
 * The full view's writes (list-bookings: details refresh, backfill, reconcile): every typed column,
 * the raw record and its packages and items, in one transaction with the caller's progress.
 * A stale-write guard keeps an older copy of a record from overwriting a newer one.
 *
 * As with the feed (feed-writes.ts) the work is split in two so it can run on two threads:
 * `toDetailRows` turns a batch into plain positional values where the records are, and
 * `detailStatements` writes them where the connection is (the backfill's writer thread,
 * writer-thread.ts, or the caller's own connection).
 *
 * Each booking is inserted first and compared only when its `_id` is already stored: a backfill is
 * almost all new rows, for which a lookup first is a wasted index descent, and a new row has no
 * packages or items to delete.
 */
import type Database from "better-sqlite3";
import type { DetailBatch } from "../sync/detail-ports.js";
import type { UpsertCounts } from "../sync/ports.js";
import { noCounts } from "./feed-writes.js";
import type { PersonalData } from "./personal-data.js";
import {
  bookingTypeOf,
  childValues,
  DETAIL_COLUMNS,
  ITEM_COLUMNS,
  PACKAGE_COLUMNS,
  type Param,
  pushDetailValues,
  pushSummaryValues,
  recordText,
  SUMMARY_COLUMNS,
  sameRecordJson,
} from "./rows.js";
import type { Reject, StateWriter } from "./state.js";

export type { DetailBatch } from "../sync/detail-ports.js";

/** A booking of `DetailRows`: its `bookings` values and its children's. */
export interface DetailRow {
  /** `_id`, booking type, the summary then the detail columns in `COLUMNS` order, raw JSON. */
  values: Param[];
  /** `booking_packages` rows, in `PACKAGE_COLUMNS` order. */
  packages: Param[][];
  /** `booking_items` rows, in `ITEM_COLUMNS` order. */
  items: Param[][];
}

/** A `DetailBatch` reduced to what SQLite binds: plain data, cheap to hand to another thread. */
export interface DetailRows {
  rows: DetailRow[];
  rejects: Reject[];
  syncedAt: string;
  listedBy: number | null;
  progress: DetailBatch["progress"];
}

const COLUMNS = [...SUMMARY_COLUMNS, ...DETAIL_COLUMNS];
// Positions in `DetailRow.values`.
const ID = 0;
const TYPE = 1;
const FIRST_COLUMN = 2;
const REMOTE_UPDATED_AT = FIRST_COLUMN + COLUMNS.indexOf("remote_updated_at");
const JSON_TEXT = FIRST_COLUMN + COLUMNS.length;

const marks = (n: number) => Array.from({ length: n }, () => "?").join(", ");

/**
 * The values a batch binds; a record's JSON is its text as received, decoded here (`recordText`).
 * With a `personal` policy, its personal fields are replaced here, as in `toFeedRows`.
 */
export function toDetailRows(batch: DetailBatch, personal?: PersonalData): DetailRows {
  const rows = batch.bookings.map(({ id, createdAt, record, raw, json }): DetailRow => {
    const values: Param[] = [id, bookingTypeOf(record.type)];
    pushSummaryValues(values, createdAt, record);
    pushDetailValues(values, createdAt, record);
    if (personal) {
      personal.protectColumns(values, FIRST_COLUMN);
      values.push(personal.recordJson(json, raw));
    } else values.push(recordText(json, raw));
    return { values, ...childValues(id, record) };
  });
  const { syncedAt, listedBy, progress } = batch;
  const rejects = personal ? batch.rejects.map(personal.protectReject) : batch.rejects;
  return { rows, rejects, syncedAt, listedBy: listedBy ?? null, progress };
}

/** Prepares the detail statements on one connection; `write` runs inside the caller's transaction. */
export function detailStatements(
  db: Database.Database,
  state: StateWriter,
): { write(part: DetailRows): UpsertCounts } {
  // summary_json stays null: it holds only what the feed served, and the feed has not served this one yet.
  const insert = db.prepare(`
    INSERT INTO bookings (id, booking_type, ${COLUMNS.join(", ")}, detail_json, detail_synced_at,
      listed_by_run, first_seen_at, summary_synced_at)
    VALUES (?, ?, ${marks(COLUMNS.length)}, ?, ?, ?, ?, ?)
    ON CONFLICT (id) DO NOTHING`);
  const select = db.prepare<[string], { remote: string | null; json: string | null }>(
    "SELECT remote_updated_at AS remote, detail_json AS json FROM bookings WHERE id = ?",
  );
  const update = db.prepare(`
    UPDATE bookings SET ${COLUMNS.map((c) => `${c} = ?`).join(", ")},
      booking_type = coalesce(?, booking_type), detail_json = ?, detail_synced_at = ?,
      listed_by_run = coalesce(?, listed_by_run), missing_since = NULL
    WHERE id = ?`);
  // Unchanged or stale rows were still served by the source: it lists them, and they are not missing.
  // If the summary changed since the details were read, the details were just confirmed current:
  // move detail_synced_at so the booking leaves the details queue instead of being re-read forever.
  const touch = db.prepare(`
    UPDATE bookings SET missing_since = NULL, listed_by_run = coalesce(@listedBy, listed_by_run),
      detail_synced_at = CASE WHEN summary_synced_at > detail_synced_at THEN @syncedAt ELSE detail_synced_at END
    WHERE id = @id AND (missing_since IS NOT NULL OR (@listedBy IS NOT NULL AND listed_by_run IS NOT @listedBy)
      OR summary_synced_at > detail_synced_at)`);
  const deletePackages = db.prepare("DELETE FROM booking_packages WHERE booking_id = ?");
  const deleteItems = db.prepare("DELETE FROM booking_items WHERE booking_id = ?");
  const insertPackage = db.prepare(
    `INSERT INTO booking_packages (${PACKAGE_COLUMNS.join(", ")}) VALUES (${marks(PACKAGE_COLUMNS.length)})`,
  );
  const insertItem = db.prepare(
    `INSERT INTO booking_items (${ITEM_COLUMNS.join(", ")}) VALUES (${marks(ITEM_COLUMNS.length)})`,
  );

  const insertChildren = (row: DetailRow) => {
    for (const p of row.packages) insertPackage.run(p);
    for (const i of row.items) insertItem.run(i);
  };

  /** Writes one booking; returns which count it adds to. */
  const upsert = (row: DetailRow, part: DetailRows): "inserted" | "updated" | "unchanged" => {
    const { values } = row;
    const { syncedAt, listedBy } = part;
    if (insert.run(values, syncedAt, listedBy, syncedAt, syncedAt).changes > 0) {
      insertChildren(row);
      return "inserted";
    }
    const id = values[ID] as string;
    const json = values[JSON_TEXT] as string;
    const remote = values[REMOTE_UPDATED_AT];
    // Present: the insert was refused because this `_id` is stored.
    const stored = select.get(id) as { remote: string | null; json: string | null };
    // ISO 8601 UTC text compares in time order; a payload without updatedAt cannot be judged stale.
    const stale = stored.remote !== null && remote !== null && stored.remote > (remote as string);
    if (stale || sameRecordJson(stored.json, json)) {
      touch.run({ id, listedBy, syncedAt });
      return "unchanged";
    }
    update.run(values.slice(FIRST_COLUMN, JSON_TEXT), values[TYPE], json, syncedAt, listedBy, id);
    deleteItems.run(id);
    deletePackages.run(id);
    insertChildren(row);
    return "updated";
  };

  return {
    write(part) {
      const counts = noCounts();
      for (const row of part.rows) counts[upsert(row, part)]++;
      state.insertRejects(part.rejects, "list", part.listedBy, part.syncedAt);
      counts.rejected = part.rejects.length;
      if (part.progress) {
        const { stream, value, checkpoint } = part.progress;
        state.writeState(stream, value, checkpoint, part.syncedAt);
      }
      return counts;
    },
  };
}

/** `commitDetailBatch` on this connection: both halves, in the caller's thread, one transaction. */
export function detailWriter(
  db: Database.Database,
  state: StateWriter,
  personal?: PersonalData,
): (batch: DetailBatch) => UpsertCounts {
  const statements = detailStatements(db, state);
  const commit = db.transaction((part: DetailRows) => statements.write(part));
  return (batch) => commit.immediate(toDetailRows(batch, personal));
}
