/**
 * The feed's hot path: summaries upserted with statements prepared once, run row by row inside one
 * transaction together with the walk's progress (invariant 3: rows and progress commit together).
 * Per-row prepared statements beat multi-row inserts or per-row query building several times over.
 * Each row is looked up first: most rows a lookback re-reads are unchanged, and comparing the stored
 * JSON costs one indexed read instead of binding every column to a write that then does nothing.
 */
import type Database from "better-sqlite3";
import type { FeedBatch, UpsertCounts } from "../sync/ports.js";
import { SUMMARY_COLUMNS, summaryParams } from "./rows.js";
import type { StateWriter } from "./state.js";

const columns = SUMMARY_COLUMNS.map(([c]) => c).join(", ");
const values = SUMMARY_COLUMNS.map(([, p]) => `@${p}`).join(", ");
// The summary view carries no sender email (contract 2.6): keep the one the full view gave.
const assignments = SUMMARY_COLUMNS.map(([c, p]) =>
  c === "sender_email" ? `${c} = coalesce(@${p}, ${c})` : `${c} = @${p}`,
).join(", ");

interface Stored {
  json: string | null;
  bookingType: string | null;
  missingSince: string | null;
}

/**
 * Prepares the feed's statements and returns `commitFeedBatch`. A summary write never touches the
 * detail columns; `missing_since` is cleared whenever a booking is seen again.
 */
export function feedWriter(db: Database.Database, state: StateWriter): (batch: FeedBatch) => UpsertCounts {
  const select = db.prepare<[string], Stored>(
    "SELECT summary_json AS json, booking_type AS bookingType, missing_since AS missingSince FROM bookings WHERE id = ?",
  );
  const insert = db.prepare(`
    INSERT INTO bookings (id, booking_type, ${columns}, summary_json, first_seen_at, summary_synced_at)
    VALUES (@id, @bookingType, ${values}, @json, @syncedAt, @syncedAt)`);
  const update = db.prepare(`
    UPDATE bookings SET ${assignments},
      booking_type = coalesce(@bookingType, booking_type),
      summary_json = @json, summary_synced_at = @syncedAt, missing_since = NULL
    WHERE id = @id`);
  // Unchanged rows: still learn the booking type from a type-scoped stream and that the booking is back.
  const touch = db.prepare(
    "UPDATE bookings SET missing_since = NULL, booking_type = coalesce(?, booking_type) WHERE id = ?",
  );

  const commit = db.transaction((batch: FeedBatch): UpsertCounts => {
    const counts: UpsertCounts = { inserted: 0, updated: 0, unchanged: 0, rejected: batch.rejects.length };
    const bookingType = batch.bookingType ?? null;
    for (const b of batch.bookings) {
      const json = JSON.stringify(b.raw);
      const stored = select.get(b.id);
      if (stored && stored.json === json) {
        const learnsType = bookingType !== null && stored.bookingType !== bookingType;
        if (stored.missingSince !== null || learnsType) touch.run(bookingType, b.id);
        counts.unchanged++;
        continue;
      }
      const row = {
        ...summaryParams(b.id, b.createdAt, b.record, bookingType),
        json,
        syncedAt: batch.syncedAt,
      };
      if (stored) {
        update.run(row);
        counts.updated++;
      } else {
        insert.run(row);
        counts.inserted++;
      }
    }
    state.insertRejects(batch.rejects, "feed", null, batch.syncedAt);
    state.writeState(batch.stream, batch.walk, batch.checkpoint, batch.syncedAt);
    return counts;
  });
  return (batch) => commit.immediate(batch);
}
