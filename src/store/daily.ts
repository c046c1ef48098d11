/**
 * The daemon's status page reads: `readStatus` and the last days of `daily_bookings_v`, summed over
 * platform and type, through one snapshot of either database. Aggregates only: no column of a
 * booking's people is read.
 */
import type { MirrorReader } from "./snapshot.js";
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
  /** Sum of their `total_amount`, NGN, rounded to the kobo; Infinity when the sum overflowed a double. */
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
export async function readDailyTotals(db: MirrorReader, days: number, at: Date): Promise<DailyTotal[]> {
  const range = lagosDays(days, at);
  // Rounded here, not in SQL: PostgreSQL has no round(double precision, integer).
  const rows = await db.all<DailyTotal>(
    `SELECT day, sum(bookings) AS bookings, sum(total_amount) AS "totalAmount"
     FROM daily_bookings_v WHERE day BETWEEN $1 AND $2 GROUP BY day`,
    [range[0] ?? "", range.at(-1) ?? ""],
  );
  const byDay = new Map(rows.map((r) => [r.day, { ...r, totalAmount: toKobo(r.totalAmount) }]));
  return range.map((day) => byDay.get(day) ?? { day, bookings: 0, totalAmount: 0 });
}

/** The status and the daily totals through one snapshot (the caller's), so the totals and the charts agree. */
export async function readStatusPage(db: MirrorReader, at: Date): Promise<StatusPageData> {
  return { status: await readStatus(db, at), daily: await readDailyTotals(db, DAILY_DAYS, at) };
}

/**
 * NGN rounded to the kobo; the view's per-group sums already are, so this only drops float noise.
 * Past 2^52 a double holds no fraction, and ×100 could overflow: kept as it is, Infinity included.
 */
function toKobo(amount: number | null): number {
  const n = amount ?? 0;
  return Math.abs(n) < 2 ** 52 ? Math.round(n * 100) / 100 : n;
}
