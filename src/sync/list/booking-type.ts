/**
 * The one rule that keeps a typed mirror (`SYNC_BOOKING_TYPE`) to its type: list-bookings cannot filter
 * by type, so every list path (details, repair, reconcile, ties, backfill) drops the other type's
 * records here, before they become a page write.
 */
import type { BookingType, Checked, SyncDeps, SyncStore } from "../ports.js";

type Typed = Checked<{ type?: unknown }>;

/** What a record shows of its type: the mirror's, another, or nothing (no `type`, or cut to a marker). */
export type TypeSeen = "ours" | "other" | "unread";

/** What `record` shows of its type against a mirror of `bookingType` (every record is "ours" when undefined). */
export function typeSeen(record: Typed, bookingType: BookingType | undefined): TypeSeen {
  if (bookingType === undefined) return "ours";
  const type = record.ok ? record.record.type : (record.raw as { type?: unknown } | null | undefined)?.type;
  if (typeof type !== "string") return "unread";
  return type === bookingType ? "ours" : "other";
}

/**
 * The records of a page that belong in a mirror of `bookingType`: those of its type, and those whose
 * type cannot be read (a record over the size cap, one without `type`) only when the mirror already
 * holds their id, since nothing else shows they are of its type. The rest are out of scope, not
 * quarantined: they are logged at debug and left out.
 */
export async function inScope<R extends Typed>(
  deps: Pick<SyncDeps<Pick<SyncStore, "absentIds">>, "store" | "logger">,
  records: readonly R[],
  bookingType: BookingType | undefined,
): Promise<R[]> {
  if (bookingType === undefined) return [...records];
  const unread = records.filter((r) => typeSeen(r, bookingType) === "unread");
  const ids = unread.flatMap((r) => (r.id === null ? [] : [r.id]));
  const absent = new Set(ids.length > 0 ? await deps.store.absentIds(ids) : []);
  for (const r of unread)
    if (r.id === null || absent.has(r.id))
      deps.logger.debug(
        { endpoint: "list-bookings", id: r.id, bookingType },
        "a record whose type cannot be read, not in the typed mirror: left out",
      );
  return records.filter((r) => {
    const seen = typeSeen(r, bookingType);
    return seen === "ours" || (seen === "unread" && r.id !== null && !absent.has(r.id));
  });
}
