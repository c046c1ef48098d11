/**
 * The booking events a write makes (`booking_events`, the outbox the events stream reads), derived
 * from the same comparison that writes `booking_changes` (plan.ts), so an event never says what
 * the history does not. An event's JSON is built here once, without its id (the database gives
 * it), and served as stored: the same row always reads as the same bytes.
 */
import { SUMMARY_COLUMNS } from "../rows.js";

export type EventType = "booking.created" | "booking.changed" | "booking.missing" | "booking.back";

/** An event row before its id: type, booking, when observed, its JSON. */
export type EventRow = [type: EventType, bookingId: string, at: string, data: string];

/**
 * The summary an event carries, by column. None is personal (no names, phones, emails, addresses),
 * so a payload is the same whatever `SYNC_PERSONAL_DATA` says and safe to log or forward.
 */
const SUMMARY: ReadonlyArray<readonly [key: string, column: string]> = [
  ["createdAt", "created_at"],
  ["bookingState", "booking_state"],
  ["orderState", "order_state"],
  ["paid", "paid"],
  ["totalAmount", "total_amount"],
  ["sourcePlatform", "source_platform"],
];

/** Where each summary column sits among a view's summary values. */
const AT = SUMMARY.map(([key, column]) => [key, SUMMARY_COLUMNS.indexOf(column), column] as const);

/** A booking's summary, as an event carries it, from a row's summary values or stored columns. */
export function summaryOf(
  bookingType: unknown,
  value: (column: string, index: number) => unknown,
): Record<string, unknown> {
  const out: Record<string, unknown> = { bookingType: bookingType ?? null };
  for (const [key, index, column] of AT) {
    const v = value(column, index) ?? null;
    out[key] = column === "paid" && v !== null ? Boolean(Number(v)) : v;
  }
  return out;
}

/** An event's row; `changes` only for `booking.changed`. */
export function eventRow(
  type: EventType,
  bookingId: string,
  at: string,
  booking: Record<string, unknown>,
  changes?: ReadonlyArray<readonly [field: string, old: string | null, now: string | null]>,
): EventRow {
  const event: Record<string, unknown> = { type, bookingId, at, booking };
  if (changes) event.changes = changes.map(([field, old, now]) => ({ field, old, new: now }));
  return [type, bookingId, at, JSON.stringify(event)];
}
