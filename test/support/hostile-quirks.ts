/**
 * Quirks of the hostile test source: habits it repeats on every answer from the start (not faults,
 * which fire per request: `heal()` keeps these), tied to bookings rather than to requests, so a client
 * that asks again in another way meets them again.
 */
import type { HostileBooking } from "./hostile-data.js";

/** Habits of a real source that are odd but not wrong (or one record that is simply huge). */
export interface Quirks {
  /** The feed says `hasMore: true` and `nextCursor: null` on every page, the last (empty) one too. */
  claimsMore?: boolean;
  /** Every n-th booking by generation index, the oldest first, is served without `_id` in both endpoints, and counted in `pagination.total`. */
  withoutIdEvery?: number;
  /** The feed serves at most this many records a page, and says `hasMore: false` on every page. */
  capsPage?: number;
  /** The booking of this generation index carries a `remarks` string of `hugeBytes` in both endpoints. */
  hugeIndex?: number;
  /** Size of the huge record's `remarks`; default 60 MB. */
  hugeBytes?: number;
  /**
   * Bookings (by generation index) both endpoints date 1970-01-01, served in their true place: a
   * set the test may add to as it goes.
   */
  misdated?: ReadonlySet<number>;
  /** Only list-bookings misdates them (the feed serves their true time); default false. */
  misdatedInListOnly?: boolean;
}

/** A booking as served: without its `_id` when the `withoutIdEvery` quirk picks it, misdated when `misdated` does. */
export function served(
  quirks: Quirks,
  b: HostileBooking,
  record: Record<string, unknown>,
  endpoint: "feed" | "list",
): Record<string, unknown> {
  const misdates = endpoint === "list" || !quirks.misdatedInListOnly;
  if (misdates && quirks.misdated?.has(b.index)) record.createdAt = "1970-01-01T00:00:00.000Z";
  const n = quirks.withoutIdEvery;
  if (n === undefined || b.index % n !== 0) return record;
  const { _id: _, ...rest } = record;
  return rest;
}

/** Where on a page the huge booking is, with its size, or undefined when the page does not hold it. */
export function hugeOn(
  quirks: Quirks,
  page: readonly HostileBooking[],
): { at: number; bytes: number } | undefined {
  if (quirks.hugeIndex === undefined) return undefined;
  const at = page.findIndex((b) => b.index === quirks.hugeIndex);
  return at === -1 ? undefined : { at, bytes: quirks.hugeBytes ?? 60 * 1024 * 1024 };
}
