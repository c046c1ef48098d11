/**
 * The events port in memory, for tests of what reads it (pull, the delivery loop) without a
 * database; the real stores are tested for real. Ids are never reused, as SQLite's AUTOINCREMENT.
 */
import { createEventNotifier, type EventNotifier } from "../../src/events/notifier.js";
import type { DeliveryState, EventStore, Replay, StoredEvent } from "../../src/events/ports.js";
import { INITIAL_DELIVERY } from "../../src/store/event-store.js";

/** An event to add; what is left out gets a plain default. */
export interface NewEvent {
  type?: string;
  bookingId?: string;
  at?: string;
}

export interface MemoryEventStore extends EventStore {
  /** Adds events as a committed page would; returns their ids. */
  append(...events: NewEvent[]): number[];
  /** The rows held now (after pruning). */
  readonly rows: readonly StoredEvent[];
  /** The replays requested, finished or not. */
  readonly replays: ReadonlyArray<Replay & { requestedAt: string; finishedAt: string | null }>;
}

export { INITIAL_DELIVERY };

/** The in-memory stream's identity. */
export const MEMORY_STREAM = "0123456789abcdef0123456789abcdef";

export function memoryEventStore(): MemoryEventStore {
  const rows: StoredEvent[] = [];
  const replays: Array<Replay & { requestedAt: string; finishedAt: string | null }> = [];
  let nextId = 1;
  let delivery: DeliveryState = { ...INITIAL_DELIVERY };
  return {
    rows,
    replays,
    append(...events) {
      return events.map((e) => {
        const id = nextId++;
        const at = e.at ?? new Date(Date.UTC(2026, 10, 27, 10, 0, 0, id)).toISOString();
        // No booking: served as the columns alone, `{"id":…,"type":…,"bookingId":…,"at":…}`.
        const type = e.type ?? "booking.created";
        rows.push({ id, type, bookingId: e.bookingId ?? `B-${id}`, at, data: "{}" });
        return id;
      });
    },
    readEvents(after, limit, to = Number.POSITIVE_INFINITY) {
      return rows.filter((r) => r.id > after && r.id <= to).slice(0, limit);
    },
    lastEventId: () => rows.at(-1)?.id ?? 0,
    firstEventId: () => rows[0]?.id ?? 0,
    bounds: () => ({ first: rows[0]?.id ?? 0, assigned: nextId - 1, stream: MEMORY_STREAM }),
    readDelivery: () => ({ ...delivery }),
    saveDelivery(change) {
      // The cursor only moves forward, as the real stores' SQL has it.
      const cursor = Math.max(delivery.cursor, change.cursor ?? delivery.cursor);
      delivery = { ...delivery, ...change, cursor };
      return { ...delivery, replayWaiting: replays.some((r) => r.finishedAt === null) };
    },
    nextReplay() {
      const open = replays.find((r) => r.finishedAt === null);
      return open ? { id: open.id, from: open.from, to: open.to, next: open.next } : null;
    },
    requestReplay(from, to, at) {
      const id = replays.length + 1;
      replays.push({ id, from, to, next: from, requestedAt: at, finishedAt: null });
      return id;
    },
    advanceReplay(id, next, at, change) {
      const replay = replays.find((r) => r.id === id);
      if (!replay) throw new Error(`no replay ${id}`);
      replay.next = next;
      if (next > replay.to) replay.finishedAt = at;
      delivery = { ...delivery, ...change };
    },
    pruneEvents(before, cap, delivered, at) {
      const { pending } = delivery;
      const open = replays.filter((r) => r.finishedAt === null);
      // What a retry or a replay still needs stays, as in the real stores.
      const needed = (id: number) =>
        (pending !== null && pending.replay !== null && id >= pending.first && id <= pending.last) ||
        open.some((r) => id >= r.next && id <= r.to);
      const old = (r: StoredEvent) =>
        r.at < before && (!delivered || (r.id <= delivery.cursor && !needed(r.id)));
      const keep = rows.filter((r) => !old(r));
      const pruned = rows.length - keep.length;
      rows.splice(0, rows.length, ...keep);
      const undelivered = rows.filter((r) => r.id > delivery.cursor);
      const dropped = Math.max(0, undelivered.length - cap);
      const past = undelivered[dropped - 1];
      if (past)
        delivery = { ...delivery, cursor: past.id, dropped: delivery.dropped + dropped, droppedAt: at };
      return { pruned, dropped };
    },
  };
}

/** A notifier that counts its listeners, so a test sees a waiter come and go without sleeping. */
export function watchedNotifier(): EventNotifier & {
  listening(): number;
  /** Resolves at the next subscription. */
  subscribed(): Promise<void>;
  /** Resolves when no one listens (at once if no one does). */
  unheard(): Promise<void>;
} {
  const inner = createEventNotifier();
  let listening = 0;
  let waiters: Array<() => void> = [];
  let idle: Array<() => void> = [];
  return {
    notify: () => inner.notify(),
    listening: () => listening,
    subscribed: () => new Promise((resolve) => waiters.push(resolve)),
    unheard: () => new Promise((resolve) => (listening === 0 ? resolve() : idle.push(resolve))),
    subscribe(listener) {
      listening++;
      const off = inner.subscribe(listener);
      const woken = waiters;
      waiters = [];
      for (const wake of woken) wake();
      return () => {
        listening--;
        off();
        if (listening > 0) return;
        const woken = idle;
        idle = [];
        for (const wake of woken) wake();
      };
    },
  };
}
