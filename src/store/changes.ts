/**
 * `booking_changes`: what an analyst asks "when did it change" about, recorded as the writers
 * update a stored booking. A change is a stored value replaced by another value, or by none when the
 * source served none. First sight is not one, nor a column filled for the first time (the first
 * details read after the feed's summary, or the reverse), nor a value that became NULL on a read
 * with problems (it may have failed its check, which the booking's problems note), nor a re-read of
 * the same values: so whichever command filled the mirror, the same source history gives the same rows.
 */
import type { Param } from "./rows.js";

/** The `bookings` columns whose changes are kept. */
export const TRACKED_COLUMNS = [
  "paid",
  "booking_state",
  "order_state",
  "customer_acceptance_state",
  "total_amount",
  "sub_total",
  "booking_vat",
  "insurance_fee",
  "fuel_surcharge_amount",
  "packaging_fee_amount",
  "carrier",
  "service_type",
  "delivery_type",
  "delivery_mode",
] as const;

/** Tracked columns among `columns`, each with its position there. */
export function trackedIn(columns: readonly string[]): Array<readonly [column: string, index: number]> {
  return TRACKED_COLUMNS.flatMap((c) => {
    const i = columns.indexOf(c);
    return i < 0 ? [] : [[c, i] as const];
  });
}

/** Stored values as text, as `booking_changes` keeps them. */
const text = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));

/**
 * Each tracked column whose stored value (`before`) was replaced by another (`values[offset + index]`),
 * as text. A value that became NULL counts only when the new read was `clean` (no problems noted): the
 * source then really served no value; otherwise the NULL may be a value that failed its check.
 */
export function changedColumns(
  tracked: ReturnType<typeof trackedIn>,
  before: Record<string, unknown>,
  values: readonly Param[],
  offset: number,
  clean: boolean,
): Array<[column: string, old: string | null, now: string | null]> {
  return tracked.flatMap(([column, index]): Array<[string, string | null, string | null]> => {
    const old = text(before[column]);
    const now = text(values[offset + index]);
    const replaced = old !== null && old !== now && (now !== null || clean);
    return replaced ? [[column, old, now]] : [];
  });
}

/**
 * How a stored booking's new copy counts: `updated` when a value changed or its view's JSON replaced
 * an earlier copy; `unchanged` for the first copy of a view (the feed's summary of a booking a list
 * read stored) that changes no value, so a sync after a backfill does not report the backfill's rows
 * as updated.
 */
export function countOfUpdate(storedJson: string | null, changes: number): "updated" | "unchanged" {
  return storedJson === null && changes === 0 ? "unchanged" : "updated";
}
