/**
 * The daemon's status page reads: `readStatus` and the last days of `daily_bookings_v`, summed over
 * platform and type, through one snapshot of either database. Aggregates only: no column of a
 * booking's people is read.
 */
import { unlessFails } from "./savepoint-read.js";
import type { MirrorReader } from "./snapshot.js";
import { readStatus } from "./status.js";

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
  const between = [range[0] ?? "", range.at(-1) ?? ""];
  const rows =
    (await unlessOverflow(db, () => db.all<DailyTotal>(sums("BETWEEN $1 AND $2"), between))) ??
    (await dayByDay(db, range));
  const byDay = new Map(rows.map((r) => [r.day, { ...r, totalAmount: toKobo(r.totalAmount) }]));
  return range.map((day) => byDay.get(day) ?? { day, bookings: 0, totalAmount: 0 });
}

// Rounded in toKobo, not in SQL: PostgreSQL has no round(double precision, integer).
const sums = (days: string) => `SELECT day, sum(bookings) AS bookings, sum(total_amount) AS "totalAmount"
  FROM daily_bookings_v WHERE day ${days} GROUP BY day`;

/** `read`'s rows, or undefined where PostgreSQL refuses a double sum past the largest one (SQLSTATE 22003; SQLite gives Infinity). */
function unlessOverflow<R>(db: MirrorReader, read: () => Promise<R[]>): Promise<R[] | undefined> {
  return unlessFails(db, "daily_sums", read, (err) => (err as { code?: unknown }).code === "22003");
}

const COUNTS = "SELECT day, sum(bookings) AS bookings FROM daily_bookings_v WHERE day = $1 GROUP BY day";

/**
 * Each day on its own, after PostgreSQL refused the whole range: a day whose sum overflows has its
 * count (the query that leaves the sum out never computes it) and Infinity, as SQLite would say.
 */
async function dayByDay(db: MirrorReader, range: string[]): Promise<DailyTotal[]> {
  const rows: DailyTotal[] = [];
  for (const day of range) {
    const summed = await unlessOverflow(db, () => db.all<DailyTotal>(sums("= $1"), [day]));
    if (summed) rows.push(...summed);
    else {
      const counted = await db.all<Omit<DailyTotal, "totalAmount">>(COUNTS, [day]);
      rows.push(...counted.map((r) => ({ ...r, totalAmount: Number.POSITIVE_INFINITY })));
    }
  }
  return rows;
}

/** What the status page shows, read at one moment. */
export type StatusPageData = Awaited<ReturnType<typeof readStatusPage>>;

/**
 * The status and the `DAILY_DAYS` daily totals, oldest first, through one snapshot (the caller's), so
 * the totals and the charts agree.
 */
export async function readStatusPage(db: MirrorReader, at: Date) {
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
