/**
 * A real mirror on either backend as the events stream sees it: events made the way production
 * makes them (feed pages of new bookings, each committed), and SQL beside it on another connection.
 */
import { servedEvent } from "../../src/events/message.js";
import type { EventStore, StoredEvent } from "../../src/events/ports.js";
import type { OpenOptions } from "../../src/store/open.js";
import type { Mirror } from "../../src/store/store.js";
import { type MirrorSql, mirrorSql, openBackendMirror, type Query } from "./mirror-harness.js";
import type { Backend } from "./postgres.js";
import { feedBatch, okSummary, summaryRaw } from "./store-fixtures.js";

/** When `append`'s pages are read unless told: events carry it as their `at`. */
export const PAGE_AT = "2026-11-27T10:00:00.000Z";

export interface EventMirror {
  /** What `Backend.url()` gave: open another mirror of the same database with it. */
  location: string;
  mirror: Mirror;
  /** `mirror.events`. */
  events: EventStore;
  query: Query;
  execute: MirrorSql["execute"];
  /**
   * Commits a feed page of `count` bookings never seen (one `booking.created` each), read at `at`;
   * the new events' ids.
   */
  append(count: number, at?: string): Promise<number[]>;
  close(): Promise<void>;
}

/** A fresh mirror on `backend` (or the one at `location`) opened with `options`; the caller closes it. */
export async function eventMirror(
  backend: Backend,
  options: OpenOptions = {},
  at?: string,
): Promise<EventMirror> {
  const location = at ?? (await backend.url());
  const mirror = await openBackendMirror(backend.kind, location, options);
  const sql = mirrorSql(backend.kind, location);
  let next = 1;
  return {
    location,
    mirror,
    events: mirror.events,
    query: sql.query,
    execute: sql.execute,
    async append(count, at = PAGE_AT) {
      const before = await mirror.events.lastEventId();
      const records = Array.from({ length: count }, () => okSummary(summaryRaw(next++)));
      await mirror.save(feedBatch(records, at));
      await mirror.flush();
      return (await mirror.events.readEvents(before, count)).map((e) => e.id);
    },
    async close() {
      try {
        await sql.close();
      } finally {
        await mirror.close();
      }
    },
  };
}

/** An event as served: its stored id put back in front of its JSON. */
export interface Served {
  id: number;
  type: string;
  bookingId: string;
  at: string;
  booking: Record<string, unknown>;
  changes?: Array<{ field: string; old: string | null; new: string | null }>;
}
export const parsed = (e: StoredEvent): Served => JSON.parse(servedEvent(e)) as Served;

/** The summary an event of booking `bookingId` must carry: the mirror's columns as committed. */
export async function summaryOf(query: Query, bookingId: string) {
  const [row] = await query<Record<string, unknown>>(
    `SELECT booking_type, created_at, booking_state, order_state, paid, total_amount, source_platform
       FROM bookings WHERE id = $1`,
    [bookingId],
  );
  if (!row) throw new Error(`no booking ${bookingId}`);
  return {
    bookingType: row.booking_type,
    createdAt: row.created_at,
    bookingState: row.booking_state,
    orderState: row.order_state,
    paid: row.paid === null ? null : Boolean(Number(row.paid)),
    totalAmount: row.total_amount === null ? null : Number(row.total_amount),
    sourcePlatform: row.source_platform,
  };
}
