/**
 * `booking_changes`: what an analyst asks "when did it change" about, recorded as the writers
 * update a stored booking. First sight is not a change, and neither is a re-read of the same values.
 */
import type Database from "better-sqlite3";
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

/** Each tracked column whose new value (`values[offset + index]`) differs from `before`, as text. */
export function changedColumns(
  tracked: ReturnType<typeof trackedIn>,
  before: Record<string, unknown>,
  values: readonly Param[],
  offset: number,
): Array<[column: string, old: string | null, now: string | null]> {
  return tracked.flatMap(([column, index]): Array<[string, string | null, string | null]> => {
    const old = text(before[column]);
    const now = text(values[offset + index]);
    return old === now ? [] : [[column, old, now]];
  });
}

/**
 * Records, for booking `id`, every tracked column whose new value (`values[offset + index]`)
 * differs from `before`; `runId` gives the run being recorded, if any.
 */
export function changeRecorder(db: Database.Database, runId: () => number | null) {
  const insert = db.prepare(`
    INSERT INTO booking_changes (booking_id, field, old_value, new_value, observed_at, run_id)
    VALUES (?, ?, ?, ?, ?, (SELECT id FROM sync_runs WHERE id = ?))`);
  return (
    id: string,
    tracked: ReturnType<typeof trackedIn>,
    before: Record<string, unknown>,
    values: readonly Param[],
    offset: number,
    at: string,
  ): void => {
    for (const [column, old, now] of changedColumns(tracked, before, values, offset))
      insert.run(id, column, old, now, at, runId());
  };
}
