/**
 * Pull: a consumer reads the events after the last id it processed, a page at a time, and may wait
 * for the next one (GET /events, `booking-sync events`). The store's bytes are served as they are,
 * so the same rows always serve the same text.
 */
import type { TimerClock } from "../sync/ports.js";
import { servedEvent } from "./message.js";
import type { EventWake } from "./notifier.js";
import type { EventStore, StreamBounds } from "./ports.js";

/** Bounds of one read: events a page (default 100, at most 1,000) and seconds a wait (at most 60). */
export const PULL = { defaultLimit: 100, maxLimit: 1000, maxWaitSeconds: 60 } as const;

/** How often a waiter reads the store itself, ms: it sees writers in other processes this way. */
export const EVENT_POLL_MS = 1000;

/** One page: each event's JSON as served, and the id to ask after next. */
export interface EventPage {
  /** `{"id":<id>,"type":…}` each, ascending by id. */
  events: string[];
  /** The last event's id, or `after` when the page is empty. */
  last: number;
  /** The oldest event kept's id (0 when none): events between `after` and it were pruned. */
  first: number;
  /** The stream's identity: a consumer gives it back to be refused when the mirror was made again. */
  stream: string | null;
  /** Why the consumer's place is not in this stream (then no events): it must read again from 0. */
  lost?: string;
}

/** `text` as a whole number (an event id, a count), or undefined when it is not one. */
export function wholeNumber(text: string): number | undefined {
  // 15 digits stay exact in a double; event ids and counts are far below.
  return /^\d{1,15}$/.test(text) ? Number(text) : undefined;
}

/**
 * The events after `after`, at most `limit` of them, and the oldest id kept: a consumer whose
 * `after` is older than that missed what retention pruned, and is told rather than left to guess.
 * A place that cannot be in this stream (`stream` not this one's, or `after` past every id given)
 * is `lost`, with no events: waiting there would skip the new stream's first events without a word.
 */
export async function readPage(
  store: Pick<EventStore, "readEvents" | "bounds">,
  after: number,
  limit: number,
  stream?: string,
): Promise<EventPage> {
  const rows = await store.readEvents(after, limit);
  // After the events: what retention pruned meanwhile is then still said.
  const bounds = await store.bounds();
  const page = { events: [] as string[], last: after, first: bounds.first, stream: bounds.stream };
  const lost = lostPlace(after, stream, bounds);
  if (lost) return { ...page, lost };
  return { ...page, events: rows.map(servedEvent), last: rows.at(-1)?.id ?? after };
}

/** Why a consumer at `after` in `stream` has lost its place in the stream `bounds` describes; undefined when it has not. */
export function lostPlace(
  after: number,
  stream: string | undefined,
  bounds: StreamBounds,
): string | undefined {
  const again = `read again from after 0${bounds.first > 1 ? ` (the oldest event kept is ${bounds.first})` : ""}`;
  const why = "the mirror was made again, or restored from an older copy, and its event ids started over";
  if (stream !== undefined && stream !== bounds.stream)
    return `stream ${stream} is not this mirror's events stream (${bounds.stream ?? "none"}): ${why}; ${again}`;
  if (bounds.assigned !== null && after > bounds.assigned)
    return `after ${after} is beyond the newest event id this mirror has given, ${bounds.assigned}: ${why}; ${again}`;
  return undefined;
}

/** Whether events after `after` were pruned before the consumer read them. */
export const missedAfter = (after: number, first: number) => first > after + 1;

export interface WaitOptions {
  store: Pick<EventStore, "lastEventId">;
  clock: TimerClock;
  /** Ends the wait early (answers false): the client left, the server stops, Ctrl-C. */
  signal: AbortSignal;
  after: number;
  /** The longest wait, ms. */
  waitMs: number;
  /** Wakes the waiter when this process commits events; without it, the poll alone. */
  notifier?: EventWake | undefined;
}

/**
 * Resolves true as soon as an event with id > `after` exists, false after `waitMs` or on abort.
 * Rejects when the store cannot be read.
 */
export function waitForEvents(options: WaitOptions): Promise<boolean> {
  const { store, clock, signal, after } = options;
  return new Promise<boolean>((resolve, reject) => {
    let done = false;
    let reading = false;
    let again = false;
    let cancelPoll = () => {};
    const finish = (found: boolean, error?: unknown) => {
      if (done) return;
      done = true;
      unsubscribe();
      cancelPoll();
      cancelDeadline();
      signal.removeEventListener("abort", onAbort);
      if (error === undefined) resolve(found);
      else reject(error);
    };
    // One read at a time; a wake during a read asks for one more, so none is lost.
    const check = async () => {
      if (reading) {
        again = true;
        return;
      }
      reading = true;
      cancelPoll();
      try {
        do {
          again = false;
          if ((await store.lastEventId()) > after) return finish(true);
        } while (again && !done);
        if (!done) cancelPoll = clock.setTimeout(() => void check(), EVENT_POLL_MS);
      } catch (err) {
        finish(false, err);
      } finally {
        reading = false;
      }
    };
    const onAbort = () => finish(false);
    // Listening before the first read: a commit between the read and the listening is not missed.
    const unsubscribe = options.notifier?.subscribe(() => void check()) ?? (() => {});
    const cancelDeadline = clock.setTimeout(() => finish(false), Math.max(0, options.waitMs));
    signal.addEventListener("abort", onAbort);
    if (signal.aborted) finish(false);
    else void check();
  });
}
