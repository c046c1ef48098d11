/**
 * The full view's writes (list-bookings: details refresh, backfill, reconcile): every typed column,
 * the raw record and its packages and items, in one transaction with the caller's progress.
 * A stale-write guard keeps an older copy of a record from overwriting a newer one.
 */
import type Database from "better-sqlite3";
import type { FullBooking } from "../api/schemas.js";
import type { Checked, UpsertCounts } from "../sync/ports.js";
import { childRows, DETAIL_COLUMNS, type DetailParams, detailParams, SUMMARY_COLUMNS } from "./rows.js";
import type { Reject, StateWriter } from "./state.js";

/** What `commitDetailBatch` stores in one transaction. */
export interface DetailBatch {
  /** Valid full records; the same `_id` may appear more than once (the last wins). */
  bookings: Array<Extract<Checked<FullBooking>, { ok: true }>>;
  rejects: Reject[];
  /** When the batch was read (ISO): `detail_synced_at`, and `first_seen_at` for new rows. */
  syncedAt: string;
  /**
   * The run whose list-bookings pass served these records; stored on each booking (even an
   * unchanged one) so `markUnlisted` can tell which bookings the source no longer serves.
   */
  listedBy?: number | undefined;
  /** Resumable progress of the caller's stream, committed with the rows; `value: null` clears it. */
  progress?: { stream: string; value: unknown | null; checkpoint?: string | undefined } | undefined;
}

const ALL = [...SUMMARY_COLUMNS, ...DETAIL_COLUMNS];
const columns = ALL.map(([c]) => c).join(", ");
const values = ALL.map(([, p]) => `@${p}`).join(", ");
const assignments = ALL.map(([c, p]) => `${c} = @${p}`).join(", ");

type Row = DetailParams & { json: string; syncedAt: string; listedBy: number | null };

/** Prepares the detail statements and returns `commitDetailBatch`. */
export function detailWriter(
  db: Database.Database,
  state: StateWriter,
): (batch: DetailBatch) => UpsertCounts {
  const select = db.prepare<[string], { remote: string | null; json: string | null }>(
    "SELECT remote_updated_at AS remote, detail_json AS json FROM bookings WHERE id = ?",
  );
  // summary_json stays null: it holds only what the feed served, and the feed has not served this one yet.
  const insert = db.prepare(`
    INSERT INTO bookings (id, booking_type, ${columns}, detail_json, detail_synced_at, listed_by_run,
      first_seen_at, summary_synced_at)
    VALUES (@id, @bookingType, ${values}, @json, @syncedAt, @listedBy, @syncedAt, @syncedAt)`);
  const update = db.prepare(`
    UPDATE bookings SET ${assignments}, booking_type = coalesce(@bookingType, booking_type),
      detail_json = @json, detail_synced_at = @syncedAt,
      listed_by_run = coalesce(@listedBy, listed_by_run), missing_since = NULL
    WHERE id = @id`);
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
  const insertPackage = db.prepare(`
    INSERT INTO booking_packages (booking_id, position, package_id, actual_weight, length, width, height,
      dimension_weight, dimension_price, predefined_dimension, multiple)
    VALUES (@bookingId, @position, @packageId, @actualWeight, @length, @width, @height,
      @dimensionWeight, @dimensionPrice, @predefinedDimension, @multiple)`);
  const insertItem = db.prepare(`
    INSERT INTO booking_items (booking_id, package_position, position, item_id, name, hs_code, quantity, price,
      exclude_packing_list)
    VALUES (@bookingId, @packagePosition, @position, @itemId, @name, @hsCode, @quantity, @price,
      @excludePackingList)`);

  const replaceChildren = (id: string, record: FullBooking) => {
    deleteItems.run(id);
    deletePackages.run(id);
    const { packages, items } = childRows(id, record);
    for (const p of packages) insertPackage.run(p);
    for (const i of items) insertItem.run(i);
  };

  /** Writes one record; returns which count it adds to. */
  const upsert = (b: DetailBatch["bookings"][number], batch: DetailBatch): keyof UpsertCounts => {
    const row: Row = {
      ...detailParams(b.id, b.createdAt, b.record),
      json: JSON.stringify(b.raw),
      syncedAt: batch.syncedAt,
      listedBy: batch.listedBy ?? null,
    };
    const stored = select.get(b.id);
    if (stored === undefined) {
      insert.run(row);
      replaceChildren(b.id, b.record);
      return "inserted";
    }
    // ISO 8601 UTC text compares in time order; a payload without updatedAt cannot be judged stale.
    const stale =
      stored.remote !== null && row.remoteUpdatedAt !== null && stored.remote > row.remoteUpdatedAt;
    if (stale || stored.json === row.json) {
      touch.run({ id: b.id, listedBy: row.listedBy, syncedAt: row.syncedAt });
      return "unchanged";
    }
    update.run(row);
    replaceChildren(b.id, b.record);
    return "updated";
  };

  const commit = db.transaction((batch: DetailBatch): UpsertCounts => {
    const counts: UpsertCounts = { inserted: 0, updated: 0, unchanged: 0, rejected: batch.rejects.length };
    for (const b of batch.bookings) counts[upsert(b, batch)]++;
    state.insertRejects(batch.rejects, "list", batch.listedBy ?? null, batch.syncedAt);
    if (batch.progress) {
      const { stream, value, checkpoint } = batch.progress;
      state.writeState(stream, value, checkpoint, batch.syncedAt);
    }
    return counts;
  });
  return (batch) => commit.immediate(batch);
}
