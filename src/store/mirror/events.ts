/**
 * The booking events a write makes (`booking_events`, the outbox the events stream reads), derived
 * from the same comparison that writes `booking_changes` (plan.ts), so an event never says what
 * the history does not. Only what is not already a column of its row is JSON (`data`): the id,
 * type, booking and time are put back in front when served (events/message.ts `servedEvent`), so
 * the same row always reads as the same bytes.
 */
import { SUMMARY_COLUMNS } from "../rows.js";

export type EventType = "booking.created" | "booking.changed" | "booking.missing" | "booking.back";

/** An event row before its id: type, booking, when observed, and `data`: its booking and changes as JSON. */
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

/** An event's row; `changes` only for `booking.changed`. `data` is `{"booking":…}` or `{"booking":…,"changes":[…]}`. */
export function eventRow(
  type: EventType,
  bookingId: string,
  at: string,
  booking: Record<string, unknown>,
  changes?: ReadonlyArray<readonly [field: string, old: string | null, now: string | null]>,
): EventRow {
  const data: Record<string, unknown> = { booking };
  if (changes) data.changes = changes.map(([field, old, now]) => ({ field, old, new: now }));
  return [type, bookingId, at, JSON.stringify(data)];
}
