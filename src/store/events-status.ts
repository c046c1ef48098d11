/**
 * How the booking events stream stands, as `status`, the status page and /metrics show it: one read,
 * in the caller's snapshot, with SQL both databases run. A mirror opened read-only is never migrated,
 * so one made before the events tables existed is read as having none rather than failing the status.
 */
import { SINK, stateOf } from "./event-store.js";
import { isMissingTable, unlessFails } from "./savepoint-read.js";
import type { MirrorReader } from "./snapshot.js";

/** The stream and its webhook's delivery as of a moment; times ISO 8601 UTC, ages whole seconds. */
export interface EventsStatus {
  /** The newest event's id (at least the cursor: delivered events may have been pruned); 0 before the first. */
  lastId: number;
  /** The oldest event retention has kept; null when none is stored. */
  oldest: { id: number; at: string } | null;
  /** The webhook's delivery; null when no webhook was ever configured (no `event_delivery` row). */
  delivery: EventsDelivery | null;
}

/** The webhook sink's figures: how far it has got, how far behind it is, and what went wrong. */
export interface EventsDelivery {
  /** The last event id delivered (the cursor); 0 when none. */
  cursor: number;
  /** Events stored after the cursor: `lastId − cursor`. */
  lagEvents: number;
  /** Seconds from the oldest undelivered event's `at` to now; 0 when every event is delivered. */
  lagSeconds: number;
  /** Failed attempts of the pending message so far. */
  attempts: number;
  /** The last delivery's failure (kept after later successes) and when; null when none failed. */
  lastError: string | null;
  lastErrorAt: string | null;
  /** When the failed message is tried again; null when nothing waits on a backoff. */
  nextAttemptAt: string | null;
  lastDeliveredAt: string | null;
  /** Undelivered events dropped past `EVENTS_MAX_UNDELIVERED`, in all, and when last; 0 and null when none. */
  dropped: number;
  droppedAt: string | null;
}

/** The events stream as of `now`; null when the mirror has no events tables yet. */
export async function readEventsStatus(db: MirrorReader, now: Date): Promise<EventsStatus | null> {
  const ids = await unlessFails(
    db,
    "events_status",
    () =>
      db.all<{ last: unknown; first: unknown }>(
        `SELECT coalesce(max(id), 0) AS last, min(id) AS first FROM booking_events`,
      ),
    isMissingTable,
  );
  if (ids === undefined) return null;
  const first = ids[0]?.first ?? null;
  const oldest = first === null ? null : { id: Number(first), at: await atOf(db, "id = $1", Number(first)) };
  const [row] = await db.all<Record<string, unknown>>("SELECT * FROM event_delivery WHERE name = $1", [SINK]);
  const lastId = Number(ids[0]?.last ?? 0);
  if (!row) return { lastId, oldest, delivery: null };
  const state = stateOf(row);
  // The first undelivered: where the lag in time starts.
  const waiting = await atOf(db, "id > $1 ORDER BY id LIMIT 1", state.cursor);
  const last = Math.max(lastId, state.cursor);
  return {
    lastId: last,
    oldest,
    delivery: {
      cursor: state.cursor,
      lagEvents: last - state.cursor,
      lagSeconds: waiting === "" ? 0 : Math.max(0, Math.round((now.getTime() - Date.parse(waiting)) / 1000)),
      attempts: state.attempts,
      lastError: state.lastError,
      lastErrorAt: state.lastErrorAt,
      nextAttemptAt: state.nextAttemptAt,
      lastDeliveredAt: state.lastDeliveredAt,
      dropped: state.dropped,
      droppedAt: state.droppedAt,
    },
  };
}

/** The `at` of the event `where` picks (one `$1`), "" when there is none. */
async function atOf(db: MirrorReader, where: string, param: number): Promise<string> {
  const [row] = await db.all<{ at: string }>(`SELECT at FROM booking_events WHERE ${where}`, [param]);
  return row?.at ?? "";
}
