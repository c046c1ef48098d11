/**
 * The daemon's status page reads: `readStatus` and the last days of `daily_bookings_v`, summed over
 * platform and type, in one snapshot. Aggregates only: no column of a booking's people is read.
 */
import type Database from "better-sqlite3";
import { readStatus, type Status } from "./status.js";

/** Days the status page charts, the one holding `at` included. */
export const DAILY_DAYS = 30;

const DAY_MS = 86_400_000;
/** Africa/Lagos is UTC+1 all year, no daylight saving: the view's `date(created_at, '+1 hour')`. */
const LAGOS_OFFSET_MS = 3_600_000;

/** One Lagos calendar day of bookings the source still serves. */
export interface DailyTotal {
  /** YYYY-MM-DD in Africa/Lagos. */
  day: string;
  /** Bookings created that day. */
  bookings: number;
  /** Sum of their `total_amount`, NGN, rounded to the kobo. */
  totalAmount: number;
}

/** What the status page shows, read at one moment. */
export interface StatusPageData {
  status: Status;
  /** `DAILY_DAYS` days, oldest first. */
  daily: DailyTotal[];
}

/** The Lagos day holding `at` and the `days - 1` before it, oldest first. */
export function lagosDays(days: number, at: Date): string[] {
  const today = Math.floor((at.getTime() + LAGOS_OFFSET_MS) / DAY_MS) * DAY_MS;
  return Array.from({ length: days }, (_, i) =>
    new Date(today - (days - 1 - i) * DAY_MS).toISOString().slice(0, 10),
  );
}

/** Bookings and revenue per Lagos day for the last `days` days up to `at`; a day without bookings is zeros. */
export function readDailyTotals(db: Database.Database, days: number, at: Date): DailyTotal[] {
  const range = lagosDays(days, at);
  const rows = db
    .prepare<[string, string], DailyTotal>(`
      SELECT day, sum(bookings) AS bookings, round(sum(total_amount), 2) AS totalAmount
      FROM daily_bookings_v WHERE day BETWEEN ? AND ? GROUP BY day`)
    .all(range[0] ?? "", range.at(-1) ?? "");
  const byDay = new Map(rows.map((r) => [r.day, r]));
  return range.map((day) => byDay.get(day) ?? { day, bookings: 0, totalAmount: 0 });
}

/** The status and the daily totals in one read transaction, so the totals and the charts agree. */
export function readStatusPage(db: Database.Database, at: Date): StatusPageData {
  return db.transaction(() => ({ status: readStatus(db, at), daily: readDailyTotals(db, DAILY_DAYS, at) }))();
}
