/**
 * The outbox on both databases: the events a page, a re-read and reconcile's marks write in their
 * own transaction, read back through `mirror.events` and checked through SQL on another connection.
 */
import { afterEach, expect, it } from "vitest";
import { servedEvent } from "../src/events/message.js";
import type { BatchRule } from "../src/store/batch.js";
import type { OpenOptions } from "../src/store/open.js";
import { personalDataPolicy } from "../src/store/personal-data.js";
import type { Mirror } from "../src/store/store.js";
import { type EventMirror, eventMirror, parsed, summaryOf } from "./support/event-mirror.js";
import type { Query } from "./support/mirror-harness.js";
import { describeBackends } from "./support/postgres.js";
import { feedBatch, fullRaw, listBatch, okFull, okSummary, summaryRaw } from "./support/store-fixtures.js";

const T1 = "2025-02-01T00:00:00.000Z";
const T2 = "2025-02-02T00:00:00.000Z";
const T3 = "2025-02-03T00:00:00.000Z";
/** Nothing commits by count or by age: only flush, another write, or close. */
const HELD: BatchRule = { pages: 1_000, ms: 3_600_000 };
const id = (i: number) => `bk${String(i).padStart(6, "0")}`;
/** What summaryRaw's people are made of: none may reach an event, in any mode. */
const PERSONAL = ["Ada", "Obi", "Chidi", "Eze", "ada@", "7700900123", "8031234567", "London", "Lagos"];
/** The summary's keys, sorted. */
const SUMMARY_KEYS = "bookingState bookingType createdAt orderState paid sourcePlatform totalAmount".split(
  " ",
);

const all = async (m: Mirror, after = 0) => (await m.events.readEvents(after, 1_000)).map(parsed);

describeBackends("events outbox", (backend) => {
  const open: EventMirror[] = [];
  afterEach(async () => {
    for (const m of open.splice(0)) await m.close();
  });
  const fresh = async (options: OpenOptions = {}, location?: string) => {
    const m = await eventMirror(backend, { batch: HELD, ...options }, location);
    open.push(m);
    return m;
  };
  const startRun = (m: Mirror, kind: "sync" | "reconcile", startedAt: string) =>
    m.startRun({ kind, stream: kind === "reconcile" ? null : kind, startedAt, checkpointBefore: null });

  it("a page of new bookings makes one booking.created each, in page order, with the summary and nothing personal", async () => {
    const { mirror, query } = await fresh();
    const runId = await startRun(mirror, "sync", T1);
    const order = [3, 1, 2];
    await mirror.save(
      feedBatch(
        order.map((i) => okSummary(summaryRaw(i))),
        T1,
      ),
    );
    await mirror.flush();
    const stored = await mirror.events.readEvents(0, 100);
    const ids = stored.map((e) => e.id);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(new Set(ids).size).toBe(3);
    for (const [n, e] of stored.entries()) {
      const bookingId = id(order[n] as number);
      const booking = await summaryOf(query, bookingId);
      // Stored: only what is not a column of the row. Served: the columns put back in front, the
      // bytes of the whole event as one JSON.stringify writes it (key order: id, type, bookingId, at, booking).
      expect(e).toMatchObject({ type: "booking.created", bookingId, at: T1 });
      expect(e.data).toBe(JSON.stringify({ booking }));
      expect(servedEvent(e)).toBe(
        JSON.stringify({ id: e.id, type: "booking.created", bookingId, at: T1, booking }),
      );
    }
    expect(stored.map(parsed)[1]?.booking).toMatchObject({
      paid: false,
      totalAmount: 15234.57,
      sourcePlatform: "web",
      createdAt: "2025-01-01T00:00:01.000Z",
    });
    expect(await mirror.events.lastEventId()).toBe(ids.at(-1));
    expect(await query("SELECT id, type, booking_id, at, run_id FROM booking_events ORDER BY id")).toEqual(
      stored.map((e, n) => ({
        id: e.id,
        type: "booking.created",
        booking_id: id(order[n] as number),
        at: T1,
        run_id: runId,
      })),
    );
    expect(PERSONAL.filter((p) => stored.some((e) => e.data.includes(p)))).toEqual([]);
  });

  it("carries the same summary, and nothing personal, when personal data is hashed or dropped", async () => {
    for (const mode of ["hash", "drop"] as const) {
      const { mirror, query } = await fresh({ personalData: personalDataPolicy(mode, "a key") });
      await mirror.save(feedBatch([okSummary(summaryRaw(1))], T1));
      await mirror.save(listBatch([okFull(fullRaw(2))], T1));
      await mirror.flush();
      const events = await mirror.events.readEvents(0, 100);
      expect(events.map((e) => parsed(e).bookingId)).toEqual([id(1), id(2)]);
      for (const e of events) {
        const event = parsed(e);
        expect(Object.keys(event.booking).sort()).toEqual(SUMMARY_KEYS);
        expect(event.booking).toEqual(await summaryOf(query, event.bookingId));
        expect(PERSONAL.filter((p) => e.data.includes(p))).toEqual([]);
        expect(e.data).not.toMatch(/sha256:/);
      }
    }
  });

  it("a re-read that changes tracked fields makes one booking.changed a booking, holding exactly its booking_changes", async () => {
    const { mirror, query } = await fresh();
    await mirror.save(
      feedBatch(
        [1, 2, 3].map((i) => okSummary(summaryRaw(i))),
        T1,
      ),
    );
    await mirror.flush();
    const last = await mirror.events.lastEventId();
    const runId = await startRun(mirror, "sync", T2);
    const page = [
      summaryRaw(2, { totalAmount: 99.5 }),
      summaryRaw(3),
      summaryRaw(1, { paid: true, bookingState: 3 }),
    ];
    await mirror.save(feedBatch(page.map(okSummary), T2));
    await mirror.flush();
    const events = await all(mirror, last);
    expect(events.map((e) => [e.type, e.bookingId])).toEqual([
      ["booking.changed", id(2)],
      ["booking.changed", id(1)],
    ]);
    for (const e of events) {
      const rows = await query<{ field: string; old: string | null; new: string | null }>(
        `SELECT field, old_value AS old, new_value AS new FROM booking_changes
          WHERE booking_id = $1 AND observed_at = $2 AND run_id = $3 ORDER BY id`,
        [e.bookingId, T2, runId],
      );
      expect(rows.length).toBeGreaterThan(0);
      expect(e.changes).toEqual(rows);
      expect(e.booking).toEqual(await summaryOf(query, e.bookingId));
    }
    expect((events[1]?.changes ?? []).map((c) => c.field).sort()).toEqual(["booking_state", "paid"]);
    expect(await query("SELECT count(*) AS n FROM booking_changes")).toEqual([{ n: 3 }]);

    // The same page again, and the details of a booking the feed stored: no change, no event.
    const now = await mirror.events.lastEventId();
    await mirror.save(feedBatch(page.map(okSummary), T3));
    await mirror.save(listBatch([okFull(fullRaw(3))], T3));
    await mirror.flush();
    expect(await query("SELECT booking_type AS t FROM bookings WHERE id = $1", [id(3)])).toEqual([
      { t: "IN" },
    ]);
    expect(await mirror.events.lastEventId()).toBe(now);
    expect(await query("SELECT count(*) AS n FROM booking_changes")).toEqual([{ n: 3 }]);
  });

  it("reconcile's marks make one booking.missing a booking marked, and a page serving it again booking.back", async () => {
    let commits = 0;
    const { mirror, query } = await fresh({ onCommit: () => void commits++ });
    await mirror.save(
      feedBatch(
        [1, 2, 3, 4].map((i) => okSummary(summaryRaw(i))),
        T1,
      ),
    );
    const runId = await startRun(mirror, "reconcile", T2);
    await mirror.save(listBatch([okFull(fullRaw(1))], T2, { listedBy: runId }));
    await mirror.flush();
    const last = await mirror.events.lastEventId();
    const before = commits;
    const marked = await mirror.markUnlisted({ runId, startedAt: T2, at: T3 });
    expect(marked).toBe(3);
    // Their commit wakes the waiters (a long poll, the delivery loop) as a page's does.
    expect(commits).toBe(before + 1);
    const missing = await all(mirror, last);
    expect(missing).toHaveLength(marked);
    expect(missing.map((e) => [e.type, e.bookingId, e.at])).toEqual(
      [2, 3, 4].map((i) => ["booking.missing", id(i), T3]),
    );
    for (const e of missing) {
      expect(e).not.toHaveProperty("changes");
      expect(e.booking).toEqual(await summaryOf(query, e.bookingId));
    }
    const runs = await query<{ run_id: number }>(
      "SELECT run_id FROM booking_events WHERE type = 'booking.missing'",
    );
    expect(runs.map((r) => Number(r.run_id))).toEqual([runId, runId, runId]);
    // Nothing newly marked, nothing said.
    expect(await mirror.markUnlisted({ runId, startedAt: T2, at: T3 })).toBe(0);
    expect(await mirror.events.lastEventId()).toBe(missing.at(-1)?.id);

    await mirror.save(feedBatch([okSummary(summaryRaw(3))], T3));
    await mirror.save(feedBatch([okSummary(summaryRaw(3))], T3));
    await mirror.save(listBatch([okFull(fullRaw(4))], T3));
    await mirror.flush();
    const back = await all(mirror, missing.at(-1)?.id);
    expect(back.map((e) => [e.type, e.bookingId])).toEqual([
      ["booking.back", id(3)],
      ["booking.back", id(4)],
    ]);
    expect(back[1]?.booking).toEqual(await summaryOf(query, id(4)));
  });

  it("records nothing when opened with events off", async () => {
    const { mirror, query } = await fresh({ events: false });
    await mirror.save(
      feedBatch(
        [1, 2].map((i) => okSummary(summaryRaw(i))),
        T1,
      ),
    );
    const runId = await startRun(mirror, "reconcile", T2);
    await mirror.save(listBatch([okFull(fullRaw(1, { paid: true }))], T2, { listedBy: runId }));
    expect(await mirror.markUnlisted({ runId, startedAt: T2, at: T3 })).toBe(1);
    await mirror.flush();
    expect(await query("SELECT count(*) AS n FROM booking_changes")).toEqual([{ n: 1 }]);
    expect(await query("SELECT count(*) AS n FROM booking_events")).toEqual([{ n: 0 }]);
    expect(await mirror.events.lastEventId()).toBe(0);
  });

  it("never shows an event whose page is saved but not committed, and shows it once flushed", async () => {
    const { mirror, query } = await fresh();
    await mirror.save(feedBatch([okSummary(summaryRaw(1))], T1));
    await mirror.save(feedBatch([okSummary(summaryRaw(2))], T1));
    expect(await mirror.countBookings()).toBe(2); // the writer sees its own pages
    expect(await mirror.events.readEvents(0, 100)).toEqual([]);
    expect(await mirror.events.lastEventId()).toBe(0);
    expect(await query("SELECT count(*) AS n FROM booking_events")).toEqual([{ n: 0 }]);
    await mirror.flush();
    expect((await all(mirror)).map((e) => e.bookingId)).toEqual([id(1), id(2)]);
  });

  // The writer lease keeps a second writer out; were two transactions to overlap anyway, an id
  // taken later must not commit first, or a consumer past it would never see the earlier one.
  it.skipIf(backend.kind === "sqlite")(
    "commits event ids in id order when two writers' pages overlap",
    async () => {
      const a = await fresh();
      const b = await fresh({}, a.location);
      await a.mirror.save(feedBatch([okSummary(summaryRaw(1))], T1, { stream: "a" }));
      const second = (async () => {
        await b.mirror.save(feedBatch([okSummary(summaryRaw(2))], T1, { stream: "b" }));
        await b.mirror.flush();
        return "committed";
      })();
      expect(await Promise.race([second, waitingOnAdvisoryLock(a.query)])).toBe("waiting");
      expect(await a.query("SELECT count(*) AS n FROM booking_events")).toEqual([{ n: 0 }]);
      await a.mirror.flush();
      expect(await second).toBe("committed");
      expect((await all(a.mirror)).map((e) => e.bookingId)).toEqual([id(1), id(2)]);
    },
  );
});

/** Resolves once a session waits for an advisory lock (checked every 10 ms: PostgreSQL tells no one). */
async function waitingOnAdvisoryLock(query: Query): Promise<"waiting"> {
  for (;;) {
    const [row] = await query<{ n: number }>(
      "SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted",
    );
    if (Number(row?.n) > 0) return "waiting";
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
