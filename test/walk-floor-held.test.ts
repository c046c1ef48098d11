/**
 * What ends a walk at its floor when bookings are dated into the past. At the fill's floor, on a
 * real SQLite mirror, a run below the floor ends the walk only when each of its bookings was stored
 * before the walk began: the walk's own saves never count, not even to a clock that steps back after
 * the walk began (an NTP correction), which would date them before. At a typed fill's bound between
 * two slices, only once the next page serves the run again.
 */
import { afterEach, expect, it } from "vitest";
import { openStore } from "../src/store/index.js";
import { emptyTotals, type PersistPage, walkSlice } from "../src/sync/feed/walk.js";
import { instantOf } from "../src/sync/feed/window.js";
import type { FeedPage, FeedQuery, SyncStore } from "../src/sync/ports.js";
import { runSync } from "../src/sync/run-sync.js";
import { fakeFeed, fixedClock, memoryLogger, type SourceBooking } from "./support/fakes.js";
import { fullRaw, listBatch, okFull, tempDir } from "./support/store-fixtures.js";

const T0 = Date.UTC(2026, 0, 1);
const EPOCH = "1970-01-01T00:00:00.000Z";

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

/** A new SQLite mirror, closed and removed after the test. */
function freshStore() {
  const tmp = tempDir();
  const store = openStore(tmp.file());
  cleanups.push(() => {
    store.close();
    tmp.cleanup();
  });
  return store;
}

/** The ids of `data` the mirror holds no row for. */
function unstoredOf(store: ReturnType<typeof openStore>, data: readonly SourceBooking[]): string[] {
  const rows = store.db.prepare("SELECT id FROM bookings").all() as Array<{ id: string }>;
  const ids = new Set(rows.map((r) => r.id));
  return data.map((b) => b.id).filter((id) => !ids.has(id));
}

/**
 * `feed` with each booking in `misdated` served as created at the time it gives, in its true place,
 * and each in `unreadable` served in its place with a `createdAt` that is no time (a reject that is
 * still a booking).
 */
function misdating(
  feed: ReturnType<typeof fakeFeed>,
  misdated: ReadonlyMap<string, string>,
  unreadable: ReadonlySet<string> = new Set(),
) {
  return {
    ...feed,
    async fetchRecent(q: FeedQuery): Promise<FeedPage> {
      const page = await feed.fetchRecent(q);
      const records = page.records.map((r): FeedPage["records"][number] => {
        if (!r.ok) return r;
        if (unreadable.has(r.id)) {
          const raw = { ...(r.raw as object), createdAt: "soon" };
          const reason = "createdAt is not an ISO 8601 time";
          return { ok: false, id: r.id, createdAt: null, reason, raw, booking: r.record };
        }
        const createdAt = misdated.get(r.id);
        return createdAt === undefined ? r : { ...r, createdAt, at: instantOf(createdAt) };
      });
      return { ...page, records };
    },
  };
}

/** Five bookings, newest first, dated into the past: at one instant, or a second apart, in order. */
const fiveAt = (ids: string[], distinct: boolean) =>
  new Map(ids.map((id, i) => [id, `1970-01-01T00:00:${distinct ? String(50 - i) : "00"}.000Z`]));

it.each([
  // [the five misdated, distinct times, the bookings after them, above the bound]
  [["u14", "u13", "u12", "u11", "u10"], false, ["u0", "u1", "u2", "u3", "u4", "u5", "u6", "u7", "u8", "u9"]],
  [["u14", "u13", "u12", "u11", "u10"], true, ["u0", "u1", "u2", "u3", "u4", "u5", "u6", "u7", "u8", "u9"]],
  // Ending the second page, which served again a booking above the bound.
  [["u5", "u4", "u3", "u2", "u1"], true, ["u0"]],
] as const)(
  "a typed fill's slice with five bookings dated into the past ending a page: %j, distinct %s",
  async (five, distinct, after) => {
    // Below the slice's bound, 30 bookings; above it, u0..u19, pages of ten. Ended on the five, the
    // slice would leave the bookings after them to no one: the slice below starts at the bound.
    // Confirmed from the next page, the five are read past. Both ways, to show the loss it prevents.
    for (const confirmFloor of [true, false]) {
      const bound = T0 + 35_000;
      const data: SourceBooking[] = [
        ...Array.from({ length: 30 }, (_, i) => ({ id: `l${i}`, at: T0 + i * 1000 })),
        ...Array.from({ length: 20 }, (_, j) => ({ id: `u${j}`, at: T0 + 40_000 + j * 1000 })),
      ];
      const api = misdating(
        fakeFeed(() => data, "exclusive"),
        fiveAt([...five], distinct),
      );
      const read = new Set<string>();
      const persist: PersistPage = async (page) => {
        for (const r of page.records) if (r.ok) read.add(r.id);
      };
      const deps = {
        api,
        store: {} as SyncStore, // nothing here asks it: no tie, no held floor
        clock: fixedClock(T0 + 3_600_000),
        logger: memoryLogger(),
        signal: new AbortController().signal,
      };
      const floor = instantOf(new Date(bound).toISOString());
      const start = { startedAt: new Date(T0 + 3_600_000).toISOString(), ceiling: null, floor, upTo: null };
      const slice = { ...start, anchor: null, fallback: null, top: null, pages: 0 };
      const walk = { stream: "feed:IN", bookingType: "IN" as const, pageSize: 10, confirmFloor };
      await walkSlice(deps, walk, slice, emptyTotals(), persist);
      const unread = data.filter((b) => b.at >= bound && !read.has(b.id)).map((b) => b.id);
      expect(unread, `confirmFloor ${confirmFloor}`).toEqual(confirmFloor ? [] : [...after]);
    }
  },
);

it("five new bookings dated into the past after one on pages of six, the clock stepped back: the run fails, never exit 0 without the bookings below them", async () => {
  const store = freshStore();
  const data: SourceBooking[] = Array.from({ length: 40 }, (_, i) => ({ id: `b${i}`, at: T0 + i * 1000 }));
  const misdated = new Map<string, string>();
  const feed = misdating(
    fakeFeed(() => data, "exclusive"),
    misdated,
  );
  const clock = fixedClock(T0 + 3_600_000);
  let onFetch: (() => void) | undefined;
  const api = {
    ...feed,
    async fetchRecent(q: FeedQuery): Promise<FeedPage> {
      onFetch?.();
      onFetch = undefined;
      return feed.fetchRecent(q);
    },
  };
  const logger = memoryLogger();
  const deps = { api, store, clock, logger, signal: new AbortController().signal };
  // A typed stream: no total behind it to show a gap.
  const sync = () => runSync(deps, { pageSize: 6, lookbackSeconds: 1, bookingType: "IN" });
  expect((await sync()).status).toBe("success");

  // Newer than every stored booking: o1..o3 in their place, five dated 1970 above them, x on top.
  const t = T0 + 100_000;
  data.push({ id: "o3", at: t }, { id: "o2", at: t + 1000 }, { id: "o1", at: t + 2000 });
  for (let k = 5; k >= 1; k--) {
    data.push({ id: `m${k}`, at: t + 10_000 - k * 1000 });
    misdated.set(`m${k}`, EPOCH);
  }
  data.push({ id: "x", at: t + 20_000 });
  clock.set(T0 + 7_200_000);
  onFetch = () => clock.set(T0 + 7_200_000 - 5_000); // the run has begun; its clock steps back
  const report = await sync();
  const unstored = unstoredOf(store, data);
  const absent = ["o1", "o2", "o3"].filter((id) => unstored.includes(id));
  // From 1970 the feed serves none of the five, and from x the same page again: the run cannot read
  // past them, so it fails with its checkpoint unmoved rather than take them for the floor.
  expect({ status: report.status, absent }, logger.lines.map((l) => l.msg).join("\n")).toEqual({
    status: "failed",
    absent: ["o1", "o2", "o3"],
  });
  expect(report.error?.message).toMatch(/did not serve again the bookings at/);
  expect(report.warnings.join("\n")).toMatch(/did not store before this walk began/);
  // Healed, the source serves them in place: the next run reads every one.
  misdated.clear();
  clock.set(T0 + 7_300_000);
  expect((await sync()).status).toBe("success");
  expect(unstoredOf(store, data)).toEqual([]);
});

it("a typed fill's upper slices take the confirmation: five bookings dated into the past ending a page inside one leave none unread", async () => {
  // 400 bookings, pages of ten, two in flight: four slices, bounded at list positions 100, 200, 300
  // (fill/slices.ts). The five end the first page of the slice below the bound at 100; ended there,
  // it would leave the ninety after them to no one. Only fill.ts gives that slice the confirmation.
  const store = freshStore();
  const data: SourceBooking[] = Array.from({ length: 400 }, (_, i) => ({ id: `b${i}`, at: T0 + i * 1000 }));
  const five = [105, 106, 107, 108, 109].map((position) => `b${399 - position}`);
  const api = misdating(
    fakeFeed(() => data, "exclusive"),
    fiveAt(five, false),
  );
  const logger = memoryLogger();
  const deps = {
    api,
    store,
    clock: fixedClock(T0 + 3_600_000),
    logger,
    signal: new AbortController().signal,
  };
  const report = await runSync(deps, { pageSize: 10, lookbackSeconds: 1, bookingType: "IN", concurrency: 2 });
  expect(report.status, report.error?.message).toBe("success");
  expect(logger.lines.some((l) => /slices of time at once/.test(String(l.msg)))).toBe(true);
  expect(unstoredOf(store, data)).toEqual([]);
});

/** A typed stream of 40 bookings a second apart on a real SQLite mirror, synced once. */
async function typedMirror(rule: "exclusive" | "inclusive", lookbackSeconds: number) {
  const store = freshStore();
  const data: SourceBooking[] = Array.from({ length: 40 }, (_, i) => ({ id: `b${i}`, at: T0 + i * 1000 }));
  const misdated = new Map<string, string>();
  const unreadable = new Set<string>();
  const clock = fixedClock(T0 + 3_600_000);
  const feed = fakeFeed(() => data, rule);
  const deps = {
    api: misdating(feed, misdated, unreadable),
    store,
    clock,
    logger: memoryLogger(),
    signal: new AbortController().signal,
  };
  const sync = () => runSync(deps, { pageSize: 10, lookbackSeconds, bookingType: "IN" });
  const unstored = () => unstoredOf(store, data);
  expect((await sync()).status).toBe("success");
  return { store, data, misdated, unreadable, clock, feed, sync, unstored };
}

it.each(["a booking of the other type", "a booking the page serves with a createdAt that is no time"])(
  "a healthy typed run whose gap at the floor holds %s ends on its first page, with no warning",
  async (what) => {
    // The floor after the first run: b39's time less a second, b38's. The page from the top serves b39
    // and b38, then the run b37..b30 below the floor; the gap is above b37.
    const { store, unreadable, clock, feed, sync, unstored } = await typedMirror("exclusive", 1);
    if (what.includes("type")) {
      const createdAt = new Date(T0 + 37_500).toISOString();
      const other = okFull(fullRaw(0, { _id: "lc1", createdAt, type: "LC" }));
      await store.save(listBatch([other], createdAt));
    } else unreadable.add("b38"); // the mirror keeps it at its time, which the page does not steer by
    clock.set(T0 + 7_200_000);
    const before = feed.requests;
    const report = await sync();
    expect(report.status, report.error?.message).toBe("success");
    expect({ requests: feed.requests - before, warnings: report.warnings }).toEqual({
      requests: 1,
      warnings: [],
    });
    expect(unstored()).toEqual([]);
  },
);

it.each([
  ["exclusive", false],
  ["inclusive", false],
  // A sixth above them dated an hour further back ("1970-01-01T00:00:00+01:00"): the page's record
  // before the run, but not the booking above it in time, which bounds the gap.
  ["exclusive", true],
  ["inclusive", true],
] as const)(
  "five bookings dated into the past, read past and stored by one run, do not end the next before a booking committed late below them (%s cursor, a sixth misdated above them: %s)",
  async (rule, sixth) => {
    // Stored by run 1, the five end run 2's first page below its floor, held. Ended there, run 2
    // would never read L, committed after run 1 in its lookback's margin below them: on a typed
    // stream no total shows it missing. The mirror holds bookings between 1970 and the booking above
    // the five, which a feed in time order would have served between them: they are read past.
    const { data, misdated, clock, sync, unstored } = await typedMirror(rule, 600);
    const t = T0 + 100_000;
    // o3..o1 in their place, the five dated 1970 above them, x1..x5 on top: the five end the first page.
    data.push({ id: "o3", at: t }, { id: "o2", at: t + 1000 }, { id: "o1", at: t + 2000 });
    for (let k = 5; k >= 1; k--) {
      data.push({ id: `m${k}`, at: t + 9000 - k * 1000 });
      misdated.set(`m${k}`, EPOCH);
    }
    if (sixth) {
      data.push({ id: "m6", at: t + 8500 });
      misdated.set("m6", "1969-12-31T23:00:00.000Z");
    }
    for (let k = 1; k <= (sixth ? 4 : 5); k++) data.push({ id: `x${k}`, at: t + 10_000 + k * 1000 });
    clock.set(T0 + 7_200_000);
    const first = await sync();
    expect(first.status, first.error?.message).toBe("success");
    expect(unstored()).toEqual([]);
    data.push({ id: "L", at: t + 3000 }); // committed late, below the five, inside the lookback
    clock.set(T0 + 7_300_000);
    const report = await sync();
    expect(report.status, report.error?.message).toBe("success");
    expect(unstored()).toEqual([]);
    expect(report.warnings).toEqual([expect.stringMatching(/out of their time's place/)]);
  },
);

it("a source that deleted bookings no reconcile has marked yet: the walk reads a page on past a gap holding one, and warns once, of that", async () => {
  const { data, clock, feed, sync, unstored } = await typedMirror("exclusive", 1);
  for (let i = 40; i < 100; i++) data.push({ id: `b${i}`, at: T0 + i * 1000 });
  clock.set(T0 + 3_700_000);
  expect((await sync()).status).toBe("success");
  // Every other booking but the newest two deleted (cancelled, say): one lies in each gap.
  for (let i = data.length - 1; i >= 0; i--) {
    const n = Number((data[i] as SourceBooking).id.slice(1));
    if (n % 2 === 1 && n < 98) data.splice(i, 1);
  }
  data.push({ id: "n1", at: T0 + 200_000 });
  clock.set(T0 + 7_200_000);
  const before = feed.requests;
  const report = await sync();
  expect(report.status, report.error?.message).toBe("success");
  expect(unstored()).toEqual([]);
  // The page from the top ends in a run below the floor with a deleted booking above it; the next
  // page, below it, serves again the booking it ended with: nothing between, the walk ends.
  expect(feed.requests - before).toBe(2);
  expect(report.warnings).toEqual([expect.stringMatching(/out of their time's place.*deleted/)]);
});

it("a quiet typed stream whose source deleted a booking above the floor, or whose list stored one the feed does not serve yet: every run ends on its first page, with no warning", async () => {
  // Lookback 5 s, b37 deleted: the page from the top serves b39, b38, b36..b34, then the run b33..b29
  // below the floor (b34's time). Only the gap just above the run counts, not the whole page: b37
  // and n1, stored ahead of the feed, lie above it.
  const { store, data, clock, feed, sync } = await typedMirror("exclusive", 5);
  data.splice(
    data.findIndex((b) => b.id === "b37"),
    1,
  );
  const createdAt = new Date(T0 + 45_000).toISOString();
  await store.save(listBatch([okFull(fullRaw(0, { _id: "n1", createdAt, type: "IN" }))], createdAt));
  const runs: Array<[number, number]> = [];
  for (let run = 1; run <= 3; run++) {
    clock.set(T0 + 3_600_000 + run * 60_000);
    const before = feed.requests;
    const report = await sync();
    expect(report.status, report.error?.message).toBe("success");
    runs.push([feed.requests - before, report.warnings.length]);
  }
  expect(runs).toEqual([
    [1, 0],
    [1, 0],
    [1, 0],
  ]);
});

it("a booking dated into the past and stored, then served at its true time above five dated further back: its old time is a booking between, and a booking committed late below the five is read", async () => {
  // G and the five are stored by one run at their false times. The next run's page serves G in its
  // place above the five; the mirror still holds G at its false time, between them and the booking
  // above them: the five are read past, to L.
  const { data, misdated, clock, sync, unstored } = await typedMirror("exclusive", 60);
  const s = (seconds: number) => T0 + seconds * 1000;
  data.push({ id: "y", at: s(1000) }, { id: "G", at: s(990) });
  misdated.set("G", new Date(s(200)).toISOString());
  for (let k = 1; k <= 5; k++) {
    data.push({ id: `m${k}`, at: s(990) - k * 100 });
    misdated.set(`m${k}`, new Date(s(100)).toISOString());
  }
  clock.set(s(2000));
  expect((await sync()).status).toBe("success");
  expect(unstored()).toEqual([]);
  misdated.delete("G"); // the source corrects G, commits L late in the margin, and three arrive
  data.push({ id: "L", at: s(950) });
  for (let k = 1; k <= 3; k++) data.push({ id: `x${k}`, at: s(1000 + k) });
  clock.set(s(3000));
  const report = await sync();
  expect(report.status, report.error?.message).toBe("success");
  expect(unstored()).toEqual([]);
});

it.each([true, false])(
  "bookings of a device with a reset clock, dated 2000 a minute apart, one of them above a real booking (interleaved: %s): a booking committed late below them is read",
  async (interleaved) => {
    // From the top: x3 x2 x1 k6 r k5..k1 (r k6 when not interleaved). The run below the floor is
    // k5..k1: r, real, cuts it. k6, as misdated as the run, does not bound the gap above it.
    const { data, misdated, clock, sync, unstored } = await typedMirror("exclusive", 600);
    const t = T0 + 100_000;
    const reset = (k: number) => `2000-01-01T00:0${k}:00.000Z`;
    data.push({ id: "o3", at: t }, { id: "o2", at: t + 1000 }, { id: "o1", at: t + 2000 });
    for (let k = 1; k <= 5; k++) {
      data.push({ id: `k${k}`, at: t + 3000 + k * 1000 });
      misdated.set(`k${k}`, reset(k));
    }
    data.push(
      { id: "r", at: t + (interleaved ? 9000 : 9500) },
      { id: "k6", at: t + (interleaved ? 9500 : 9000) },
    );
    misdated.set("k6", reset(6));
    for (let k = 1; k <= 3; k++) data.push({ id: `x${k}`, at: t + 10_000 + k * 1000 });
    clock.set(T0 + 7_200_000);
    const first = await sync();
    expect(first.status, first.error?.message).toBe("success");
    expect(unstored()).toEqual([]);
    data.push({ id: "L", at: t + 3000 }); // committed late, below them, inside the lookback
    clock.set(T0 + 7_300_000);
    const report = await sync();
    expect(report.status, report.error?.message).toBe("success");
    expect(unstored()).toEqual([]);
  },
);
