/**
 * The one rule that keeps a typed mirror (`SYNC_BOOKING_TYPE`) to its type: list-bookings cannot filter
 * by type, so every list path (details, repair, reconcile, ties, backfill) drops the other type's
 * records here, before they become a page write.
 */
import type { BookingType, Checked } from "../ports.js";

/**
 * Whether a list record belongs in a mirror of `bookingType` (every record does when it is undefined).
 * A record whose type cannot be read is kept: it may be this type, and a reject stays quarantined.
 */
export function isOfType(record: Checked<{ type?: unknown }>, bookingType: BookingType | undefined): boolean {
  if (bookingType === undefined) return true;
  const type = record.ok ? record.record.type : field(record.raw, "type");
  return typeof type !== "string" || type === bookingType;
}

/** The records of a page that belong in a mirror of `bookingType`. */
export function ofType<R extends Checked<{ type?: unknown }>>(
  records: readonly R[],
  bookingType: BookingType | undefined,
): R[] {
  return bookingType === undefined ? [...records] : records.filter((r) => isOfType(r, bookingType));
}

function field(raw: unknown, key: string): unknown {
  return typeof raw === "object" && raw !== null ? (raw as Record<string, unknown>)[key] : undefined;
}
