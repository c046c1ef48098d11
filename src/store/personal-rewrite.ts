/**
 * `rewrite-personal-data`: brings what the mirror already holds in line with SYNC_PERSONAL_DATA (a
 * sync applies it only to what it reads). It can only take values away; values already hashed, even
 * under another key, are left as they are, so a second run changes nothing.
 */
import { createHash } from "node:crypto";
import { setImmediate as yieldToTimers } from "node:timers/promises";
import type Database from "better-sqlite3";
import type { Reject } from "../sync/ports.js";
import { PERSONAL_COLUMNS, type PersonalData } from "./personal-data.js";
import { type Param, SUMMARY_COLUMNS } from "./rows.js";

export interface RewriteReport {
  /** Bookings read. */
  bookings: number;
  /** Bookings whose columns or JSON changed. */
  bookingsRewritten: number;
  /** Quarantined records whose raw JSON changed. */
  rejectsRewritten: number;
  /** Bookings, afterwards, with a personal column hashed without a key (`sha256:`) and with one. */
  hashed: { plain: number; keyed: number };
  /** Whether the WAL could be emptied at the end (a reader in a long transaction prevents it). */
  walEmptied: boolean;
}

/** Rows per transaction. */
const BATCH_SIZE = 500;

interface BookingRow {
  id: string;
  summary_json: string | null;
  detail_json: string | null;
  [column: string]: Param;
}

/**
 * Rewrites every booking and reject under `personal` (made with `stored: true`), yielding between
 * batches so lease renewal runs, and telling `onBatch` the bookings read so far after each. Then
 * VACUUM and an emptied WAL, or old values stay in free pages.
 */
export async function rewritePersonalData(
  db: Database.Database,
  personal: PersonalData,
  onBatch?: (read: number) => void,
): Promise<RewriteReport> {
  const columns = SUMMARY_COLUMNS.join(", ");
  const selectBookings = db.prepare<[string, number], BookingRow>(
    `SELECT id, ${columns}, summary_json, detail_json FROM bookings WHERE id > ? ORDER BY id LIMIT ?`,
  );
  const updateBooking = db.prepare(
    `UPDATE bookings SET ${SUMMARY_COLUMNS.map((c) => `${c} = ?`).join(", ")}, summary_json = ?, detail_json = ? WHERE id = ?`,
  );
  const report = { bookings: 0, bookingsRewritten: 0, rejectsRewritten: 0 };
  const json = (text: string | null) => (text === null ? null : personal.recordJson(JSON.parse(text)));

  const bookingBatch = db.transaction((after: string): string | undefined => {
    const rows = selectBookings.all(after, BATCH_SIZE);
    for (const row of rows) {
      const before = SUMMARY_COLUMNS.map((c) => row[c] as Param);
      const values = [...before];
      personal.protectColumns(values, 0);
      const summary = json(row.summary_json);
      const detail = json(row.detail_json);
      const same =
        values.every((v, i) => v === before[i]) && summary === row.summary_json && detail === row.detail_json;
      if (same) continue;
      updateBooking.run(values, summary, detail, row.id);
      report.bookingsRewritten++;
    }
    report.bookings += rows.length;
    return rows.at(-1)?.id;
  });
  for (let after: string | undefined = ""; after !== undefined; ) {
    after = bookingBatch.immediate(after);
    onBatch?.(report.bookings);
    await yieldToTimers();
  }

  const selectRejects = db.prepare<[number, number], { id: number; raw_json: string }>(
    "SELECT id, raw_json FROM rejected_records WHERE id > ? ORDER BY id LIMIT ?",
  );
  // Two rejects the policy makes alike become one, as they would had they arrived that way.
  const updateReject = db.prepare(
    "UPDATE OR REPLACE rejected_records SET raw_json = ?, raw_sha256 = ? WHERE id = ?",
  );
  const rejectBatch = db.transaction((after: number): number | undefined => {
    const rows = selectRejects.all(after, BATCH_SIZE);
    for (const row of rows) {
      const raw: unknown = JSON.parse(row.raw_json);
      const stub: Reject = { ok: false, id: null, createdAt: null, reason: "", raw };
      const text = JSON.stringify(personal.protectReject(stub).raw) ?? "null";
      if (text === row.raw_json) continue;
      updateReject.run(text, createHash("sha256").update(text).digest("hex"), row.id);
      report.rejectsRewritten++;
    }
    return rows.at(-1)?.id;
  });
  for (let after: number | undefined = 0; after !== undefined; ) {
    after = rejectBatch.immediate(after);
    await yieldToTimers();
  }
  const hashed = countHashed(db);
  db.exec("VACUUM");
  const [checkpoint] = db.pragma("wal_checkpoint(TRUNCATE)") as Array<{ busy: number }>;
  return { ...report, hashed, walEmptied: checkpoint?.busy === 0 };
}

function countHashed(db: Database.Database): RewriteReport["hashed"] {
  const any = (prefix: string) => PERSONAL_COLUMNS.map((c) => `${c} LIKE '${prefix}%'`).join(" OR ");
  const sql = `SELECT count(CASE WHEN ${any("sha256:")} THEN 1 END) AS plain,
    count(CASE WHEN ${any("hmac-sha256:")} THEN 1 END) AS keyed FROM bookings`;
  return db.prepare<[], RewriteReport["hashed"]>(sql).get() as RewriteReport["hashed"];
}
