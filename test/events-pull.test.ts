/**
 * Pull's core: a page serves the stored bytes with the id put first, and a long poll answers as
 * soon as an event exists, woken by this process's commits or by its own 1 s poll (other writers).
 * A test clock times the waits: nothing sleeps.
 */
import { setImmediate as settle } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { servedEvent } from "../src/events/message.js";
import { EVENT_POLL_MS, lostPlace, missedAfter, readPage, waitForEvents } from "../src/events/pull.js";
import { fixedClock } from "./support/fakes.js";
import { MEMORY_STREAM, memoryEventStore, watchedNotifier } from "./support/memory-event-store.js";

const T0 = Date.parse("2026-11-27T10:00:00.000Z");

/** A wait on a fresh store and test clock, with what it answered once it did. */
function waiting(waitMs = 30_000, after = 0) {
  const store = memoryEventStore();
  const clock = fixedClock(T0);
  const notifier = watchedNotifier();
  const controller = new AbortController();
  const answer: { found?: boolean } = {};
  const done = waitForEvents({ store, clock, notifier, signal: controller.signal, after, waitMs }).then(
    (found) => {
      answer.found = found;
      return found;
    },
  );
  return { store, clock, notifier, controller, answer, done };
}

describe("readPage", () => {
  it("serves each stored event with its id put first, byte for byte, and `last` to ask after next", async () => {
    const store = memoryEventStore();
    store.append({ bookingId: "B-1" }, { type: "booking.changed", bookingId: "B-\u001b2" }, {});
    const page = await readPage(store, 0, 2);
    expect(page.events).toEqual(store.rows.slice(0, 2).map(servedEvent));
    expect(JSON.parse(page.events[1] ?? "")).toEqual({
      id: 2,
      type: "booking.changed",
      bookingId: "B-\u001b2",
      at: store.rows[1]?.at,
    });
    expect(page.last).toBe(2);
    expect(await readPage(store, 2, 100)).toEqual({
      events: [expect.stringMatching(/^\{"id":3,"type":/)],
      last: 3,
      first: 1,
      stream: MEMORY_STREAM,
    });
  });

  it("answers an empty page with `last` = after at the end, also when every event was pruned", async () => {
    const store = memoryEventStore();
    expect(await readPage(store, 0, 100)).toEqual({ events: [], last: 0, first: 0, stream: MEMORY_STREAM });
    store.append({}, {});
    expect(await readPage(store, 2, 100)).toEqual({ events: [], last: 2, first: 1, stream: MEMORY_STREAM });
    await store.pruneEvents("2100-01-01T00:00:00.000Z", 1000, false, "2026-11-27T00:00:00.000Z");
    // The ids given are remembered: a consumer at 2 is still in place, and waits for 3.
    expect(await readPage(store, 2, 100)).toEqual({ events: [], last: 2, first: 0, stream: MEMORY_STREAM });
  });

  it("says a place is lost, reading nothing, past every id given or in another stream", async () => {
    const store = memoryEventStore();
    store.append({}, {});
    const beyond = await readPage(store, 3, 100);
    expect(beyond).toMatchObject({ events: [], last: 3, first: 1, stream: MEMORY_STREAM });
    expect(beyond.lost).toBe(
      "after 3 is beyond the newest event id this mirror has given, 2: the mirror was made again, or " +
        "restored from an older copy, and its event ids started over; read again from after 0",
    );
    const other = await readPage(store, 1, 100, "feedc0de");
    expect(other).toMatchObject({ events: [], last: 1 });
    expect(other.lost).toMatch(/^stream feedc0de is not this mirror's events stream \(0123456789abcdef/);
    expect((await readPage(store, 1, 100, MEMORY_STREAM)).lost).toBeUndefined();
    expect(lostPlace(0, undefined, { first: 7, assigned: 0, stream: null })).toBeUndefined();
    expect(lostPlace(9, undefined, { first: 7, assigned: 8, stream: null })).toMatch(
      /read again from after 0 \(the oldest event kept is 7\)$/,
    );
  });

  it("tells the oldest id kept, so a consumer behind retention knows what it missed", async () => {
    const store = memoryEventStore();
    store.append(...[1, 2, 3].map(() => ({ at: "2020-01-01T00:00:00.000Z" })), {}, {});
    await store.pruneEvents("2021-01-01T00:00:00.000Z", 1000, false, "2026-11-27T00:00:00.000Z");
    const page = await readPage(store, 0, 100);
    expect([page.events.length, page.last, page.first]).toEqual([2, 5, 4]);
    expect([missedAfter(0, page.first), missedAfter(3, page.first), missedAfter(5, 0)]).toEqual([
      true,
      false,
      false,
    ]);
  });
});

describe("waitForEvents", () => {
  it("answers at once when an event after `after` is already there, setting no timer that outlives it", async () => {
    const store = memoryEventStore();
    store.append({}, {});
    const clock = fixedClock(T0);
    const signal = new AbortController().signal;
    expect(await waitForEvents({ store, clock, signal, after: 1, waitMs: 30_000 })).toBe(true);
    expect(clock.pending()).toBe(0);
  });

  it("is woken by a notify as soon as this process commits an event, without waiting for the poll", async () => {
    const w = waiting();
    await settle();
    expect(w.notifier.listening()).toBe(1);
    // A wake with nothing new costs a read, not an empty answer.
    w.notifier.notify();
    await settle();
    expect(w.answer.found).toBeUndefined();
    w.store.append({});
    w.notifier.notify();
    expect(await w.done).toBe(true);
    expect(w.notifier.listening()).toBe(0);
    expect(w.clock.pending()).toBe(0);
  });

  it("sees a writer in another process (no notify) by its 1 s poll", async () => {
    const w = waiting();
    await settle();
    w.store.append({});
    w.clock.advance(EVENT_POLL_MS - 1);
    await settle();
    expect(w.answer.found).toBeUndefined();
    w.clock.advance(1);
    expect(await w.done).toBe(true);
  });

  it("keeps polling each second until the wait ends, then answers false and leaves nothing behind", async () => {
    const w = waiting(5_000, 3);
    w.store.append({}, {}, {}); // ids 1-3: none after 3
    for (let s = 0; s < 4; s++) {
      await settle();
      w.clock.advance(EVENT_POLL_MS);
    }
    await settle();
    expect(w.answer.found).toBeUndefined();
    w.clock.advance(EVENT_POLL_MS);
    expect(await w.done).toBe(false);
    expect(w.notifier.listening()).toBe(0);
    expect(w.clock.pending()).toBe(0);
  });

  it("answers false at once when aborted (the client left, the server stops)", async () => {
    const w = waiting();
    await settle();
    w.controller.abort();
    expect(await w.done).toBe(false);
    expect(w.clock.pending()).toBe(0);
    expect(w.notifier.listening()).toBe(0);
  });

  it("rejects when the store cannot be read, and stops waiting", async () => {
    const clock = fixedClock(T0);
    let reads = 0;
    const failing = {
      lastEventId: () => {
        if (++reads > 1) throw new Error("database is locked");
        return 0;
      },
    };
    const done = waitForEvents({
      store: failing,
      clock,
      signal: new AbortController().signal,
      after: 0,
      waitMs: 9_000,
    });
    await settle();
    clock.advance(EVENT_POLL_MS);
    await expect(done).rejects.toThrow("database is locked");
    expect(clock.pending()).toBe(0);
  });
});
