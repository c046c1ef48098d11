/**
 * The writer thread through real files: for feed and detail batches alike it stores what the
 * in-process store stores, commits rows only with their progress, stops at the first failure, and
 * hands the file back cleanly. Then a whole sync through it, over real HTTP against the simulator.
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createApiClient } from "../src/api/client.js";
import { startSimulator } from "../src/simulator/index.js";
import { openStore, type Store } from "../src/store/index.js";
import { startWriterThread } from "../src/store/writer-thread.js";
import type { DetailBatch, DetailPipe } from "../src/sync/detail-ports.js";
import type { BookingType, FeedBatch, FeedPipe, WalkProgress } from "../src/sync/ports.js";
import { runSync } from "../src/sync/run-sync.js";
import { memoryLogger } from "./support/fakes.js";
import { dist } from "./support/harness.js";
import { at, feedBatch, fullRaw, okFull, okSummary, summaryRaw, tempDir } from "./support/store-fixtures.js";

let tmp: ReturnType<typeof tempDir>;
const opened: Store[] = [];
beforeEach(() => {
  tmp = tempDir();
});
afterEach(() => {
  for (const s of opened.splice(0)) s.close();
  tmp.cleanup();
});

function open(name: string, writerThread: boolean): Store {
  const store = openStore(tmp.file(name), { writerThread });
  opened.push(store);
  return store;
}

function pipeOf(store: Store): FeedPipe {
  const pipe = store.feedPipe?.();
  if (!pipe) throw new Error("store has no feed pipe");
  return pipe;
}

const T1 = "2025-02-01T00:00:00.000Z";
const T2 = "2025-02-02T00:00:00.000Z";
const walkAt = (i: number): WalkProgress => ({
  startedAt: T1,
  floor: null,
  upTo: at(i),
  anchor: null,
  fallback: null,
  top: at(100),
  pages: i,
});
const dump = (s: Store, table: string) => s.db.prepare(`SELECT * FROM ${table} ORDER BY 1`).all();
const ids = (s: Pick<Store, "db">) => s.db.prepare("SELECT id FROM bookings ORDER BY id").pluck().all();

/** Batches that exercise every path: new, unchanged, updated, duplicates, type learning, rejects. */
/** A record that failed validation, as both kinds of batch carry it. */
const reject = {
  ok: false as const,
  id: "bad1",
  createdAt: at(3),
  reason: "paid: expected boolean",
  raw: {},
};

function script(): FeedBatch[] {
  return [
    feedBatch([okSummary(summaryRaw(1)), okSummary(summaryRaw(2)), okSummary(summaryRaw(2))], T1, {
      walk: walkAt(1),
      rejects: [reject],
    }),
    feedBatch(
      [okSummary(summaryRaw(1)), okSummary(summaryRaw(2, { paid: true })), okSummary(summaryRaw(3))],
      T2,
      {
        walk: walkAt(2),
      },
    ),
    feedBatch([okSummary(summaryRaw(1))], T2, { bookingType: "LC", walk: null, checkpoint: at(3) }),
  ];
}

describe("feed writer thread", () => {
  it("stores exactly what the in-process store stores, with the same counts", () => {
    const inline = open("inline.db", false);
    const threaded = open("threaded.db", true);
    const pipe = pipeOf(threaded);
    const expected = script().map((b) => inline.commitFeedBatch(b));
    const got = script().map((b) => {
      pipe.send(b, true);
      return pipe.settle(true);
    });
    expect(got).toEqual(expected);
    expect(expected.map((c) => [c.inserted, c.updated, c.unchanged, c.rejected])).toEqual([
      [2, 0, 1, 1],
      [1, 1, 1, 0],
      [0, 0, 1, 0],
    ]);
    for (const table of ["bookings", "sync_state"])
      expect(dump(threaded, table)).toEqual(dump(inline, table));
    expect(threaded.db.prepare("SELECT booking_id, reason FROM rejected_records").all()).toEqual([
      { booking_id: "bad1", reason: "paid: expected boolean" },
    ]);
  });

  it("stores batches sent without commit with the next commit, under its progress", () => {
    const store = open("m.db", true);
    const pipe = pipeOf(store);
    pipe.send(feedBatch([okSummary(summaryRaw(1))], T1, { walk: walkAt(1) }), false);
    pipe.send(feedBatch([okSummary(summaryRaw(2))], T1, { walk: walkAt(2) }), true);
    expect(pipe.settle(true)).toEqual({ inserted: 2, updated: 0, unchanged: 0, rejected: 0 });
    expect(ids(store)).toEqual(["bk000001", "bk000002"]);
    expect(store.readStream("feed").walk).toEqual(walkAt(2));
  });

  it("commits what it holds, with its own progress, when nothing follows or settle waits", async () => {
    const store = open("m.db", true);
    const pipe = pipeOf(store);
    pipe.send(feedBatch([okSummary(summaryRaw(1))], T1, { walk: walkAt(1) }), false);
    // The writer commits on its own once no batch follows: visible to another connection.
    const reader = new Database(tmp.file("m.db"), { readonly: true });
    try {
      while (reader.prepare("SELECT count(*) FROM bookings").pluck().get() === 0) {
        await new Promise((r) => setTimeout(r, 10));
      }
    } finally {
      reader.close();
    }
    expect(store.readStream("feed").walk).toEqual(walkAt(1));
    pipe.send(feedBatch([okSummary(summaryRaw(2))], T1, { walk: walkAt(2) }), false);
    const counts = pipe.settle(true);
    expect(counts.inserted).toBe(2);
    expect(store.readStream("feed").walk).toEqual(walkAt(2));
  });

  it("stops at a failure: nothing the walk sends after it is stored, the progress stays before it, and the next walk is stored", () => {
    const store = open("m.db", true);
    const pipe = pipeOf(store);
    pipe.send(feedBatch([okSummary(summaryRaw(1))], T1, { walk: walkAt(1) }), true);
    expect(pipe.settle(true).inserted).toBe(1);
    // booking_type is checked to be IN or LC, so this batch fails inside its transaction.
    const bad = feedBatch([okSummary(summaryRaw(2))], T1, {
      walk: walkAt(2),
      bookingType: "XX" as BookingType,
    });
    pipe.send(bad, false);
    pipe.send(feedBatch([okSummary(summaryRaw(3))], T1, { walk: walkAt(3) }), true);
    pipe.send(feedBatch([okSummary(summaryRaw(4))], T1, { walk: walkAt(4) }), true);
    expect(() => pipe.settle(true)).toThrow(/writer thread: store feed rows: CHECK constraint failed/);
    expect(ids(store)).toEqual(["bk000001"]);
    expect(store.readStream("feed").walk).toEqual(walkAt(1));
    expect(() => pipe.settle(false)).toThrow(/CHECK constraint failed/);
    // What the failed walk still sends is refused; a later walk (a daemon's next sync) is stored.
    pipe.send(feedBatch([okSummary(summaryRaw(6))], T2, { walk: walkAt(6) }), true);
    expect(() => pipe.settle(true)).toThrow(/CHECK constraint failed/);
    pipe.begin();
    pipe.send(feedBatch([okSummary(summaryRaw(5))], T2, { walk: walkAt(5) }), true);
    expect(pipe.settle(true).inserted).toBe(1);
    expect(ids(store)).toEqual(["bk000001", "bk000005"]);
    expect(store.readStream("feed").walk).toEqual(walkAt(5));
  });

  it("says why when the writer cannot open the database", () => {
    const pipe = startWriterThread(tmp.file("absent.db"));
    try {
      pipe.send(feedBatch([okSummary(summaryRaw(1))], T1), true);
      expect(() => pipe.settle(true)).toThrow(/writer thread: open database .*absent\.db/);
    } finally {
      pipe.close();
    }
    expect(fs.existsSync(tmp.file("absent.db"))).toBe(false);
  });

  it("checkpoints the WAL less often than SQLite's default, with a small page cache", () => {
    const store = open("m.db", true);
    expect(store.db.pragma("wal_autocheckpoint", { simple: true })).toBe(4000);
    expect(store.db.pragma("cache_size", { simple: true })).toBe(-2048);
  });

  it("closes its connection first, so the store's close checkpoints the WAL into the file and leaves it empty", () => {
    const store = openStore(tmp.file("m.db"), { writerThread: true });
    const pipe = pipeOf(store);
    pipe.send(feedBatch([okSummary(summaryRaw(1))], T1, { walk: walkAt(1) }), true);
    pipe.settle(true);
    expect(fs.statSync(tmp.file("m.db-wal")).size).toBeGreaterThan(0);
    store.close();
    // Kept, and empty: no exclusive lock to delete it, and nothing for the next opener to recover.
    expect(fs.statSync(tmp.file("m.db-wal")).size).toBe(0);
    fs.copyFileSync(tmp.file("m.db"), tmp.file("copy.db"));
    const copy = new Database(tmp.file("copy.db"), { readonly: true });
    expect(ids({ db: copy })).toEqual(["bk000001"]);
    copy.close();
  });

  it("starts its thread in a process started with --input-type=module, which threads inherit", () => {
    expect(fs.existsSync(dist("store/index.js")), "run `npm run build` first").toBe(true);
    const script = `
      const { openStore } = await import(${JSON.stringify(dist("store/index.js"))});
      const store = openStore(${JSON.stringify(tmp.file("m.db"))}, { writerThread: true });
      const batch = { bookings: [], rejects: [], syncedAt: "2026-01-01T00:00:00.000Z", listedBy: null,
        progress: { stream: "backfill", value: { pages: 1 } } };
      const counts = await store.detailPipe().storeDetails(batch);
      store.close();
      console.log(JSON.stringify(counts));`;
    const out = execFileSync(process.execPath, ["--input-type=module", "-e", script], {
      encoding: "utf8",
      env: { ...process.env, NODE_OPTIONS: "" },
    });
    expect(JSON.parse(out)).toEqual({ inserted: 0, updated: 0, unchanged: 0, rejected: 0 });
  });
});

function detailPipeOf(store: Store): DetailPipe {
  const pipe = store.detailPipe?.();
  if (!pipe) throw new Error("store has no detail pipe");
  return pipe;
}

/** Detail batches that exercise every path: new, duplicate, updated, stale, unchanged, rejects. */
function detailScript(): DetailBatch[] {
  const progress = (pages: number) => ({ stream: "backfill", value: { pages } });
  return [
    {
      bookings: [okFull(fullRaw(1)), okFull(fullRaw(2)), okFull(fullRaw(2))],
      rejects: [reject],
      syncedAt: T1,
      listedBy: 1,
      progress: progress(1),
    },
    {
      bookings: [
        okFull(fullRaw(1)),
        okFull(fullRaw(2, { paid: true, updatedAt: at(300), packages: { packages: [] } })),
        okFull(fullRaw(3)),
      ],
      rejects: [],
      syncedAt: T2,
      listedBy: 2,
      progress: progress(2),
    },
    // An older copy of booking 2 must not overwrite the newer one.
    { bookings: [okFull(fullRaw(2, { paid: false }))], rejects: [], syncedAt: T2, progress: progress(3) },
  ];
}

/** A backfill page of one booking, `i`, with the progress that counts it. */
const pageBatch = (i: number): DetailBatch => ({
  bookings: [okFull(fullRaw(i))],
  rejects: [],
  syncedAt: T1,
  progress: { stream: "backfill", value: { pages: i } },
});

describe("detail batches through the writer thread", () => {
  it("store exactly what the in-process store stores, with the same counts", async () => {
    const inline = open("inline.db", false);
    const threaded = open("threaded.db", true);
    const pipe = detailPipeOf(threaded);
    const batches = detailScript();
    const expected = batches.map((b) => inline.commitDetailBatch(b));
    // Sent all at once, so they queue up and share transactions; each still gets its own counts.
    expect(await Promise.all(batches.map((b) => pipe.storeDetails(b)))).toEqual(expected);
    expect(expected.map((c) => c.inserted)).toEqual([2, 1, 0]);
    expect(expected[1]).toMatchObject({ updated: 1, unchanged: 1 });
    for (const table of ["bookings", "booking_packages", "booking_items", "rejected_records", "sync_state"])
      expect(dump(threaded, table), table).toEqual(dump(inline, table));
    expect(threaded.readProgress("backfill").progress).toEqual({ pages: 3 });
  });

  it("after a failed batch, refuses the rest of its pass, and stores the next pass", async () => {
    const store = open("m.db", true);
    store.db.exec(`CREATE TRIGGER refuse BEFORE INSERT ON bookings WHEN NEW.id = 'bk000002'
      BEGIN SELECT RAISE(ABORT, 'refused by the test'); END`);
    const pipe = detailPipeOf(store);
    expect(await pipe.storeDetails(pageBatch(1))).toMatchObject({ inserted: 1 });
    const [second, third] = await Promise.allSettled([
      pipe.storeDetails(pageBatch(2)),
      pipe.storeDetails(pageBatch(3)),
    ]);
    expect(second).toMatchObject({
      status: "rejected",
      reason: { message: expect.stringMatching(/refused by the test/) },
    });
    expect(third).toMatchObject({
      status: "rejected",
      reason: { message: expect.stringMatching(/refused by the test/) },
    });
    expect(ids(store)).toEqual(["bk000001"]);
    expect(store.readProgress("backfill").progress).toEqual({ pages: 1 });
    // The rest of the failed pass is refused; a new pass is stored.
    await expect(pipe.storeDetails(pageBatch(4))).rejects.toThrow(/refused by the test/);
    pipe.beginDetails();
    expect(await pipe.storeDetails(pageBatch(4))).toMatchObject({ inserted: 1 });
    expect(ids(store)).toEqual(["bk000001", "bk000004"]);
  });
  it("rejects what it waits for when the writer stops answering, instead of waiting for good", async () => {
    open("m.db", false);
    const pipe = startWriterThread(tmp.file("m.db"), { stallMs: 1000 });
    // Another program holds the write lock: the writer waits on it (for up to its 5 s busy timeout).
    // A second is also long enough for the writer to answer once the lock is let go, on a busy machine.
    const other = new Database(tmp.file("m.db"));
    try {
      other.exec("BEGIN IMMEDIATE");
      await expect(pipe.storeDetails(pageBatch(1))).rejects.toThrow(/nothing stored in 1000 ms/);
      // The pass has given up; a new one is stored once the lock is let go.
      await expect(pipe.storeDetails(pageBatch(2))).rejects.toThrow(/nothing stored in 1000 ms/);
      other.exec("ROLLBACK");
      pipe.beginDetails();
      expect(await pipe.storeDetails(pageBatch(3))).toMatchObject({ inserted: 1 });
      // The refused batch never reached the writer (the first one is stored late, or fails on the lock).
      expect(ids({ db: other })).toContain("bk000003");
      expect(ids({ db: other })).not.toContain("bk000002");
    } finally {
      pipe.close();
      other.close();
    }
  });
});

describe("a sync through the writer thread", () => {
  it("a write SQLite refuses fails the sync without moving its progress past it; the next sync completes the mirror", async () => {
    const sim = await startSimulator({ seed: 4, bookings: 1000 });
    try {
      const store = open("refused.db", true);
      // One booking part-way down the feed is refused; those after it are not.
      const newestFirst = sim.allSummaries().sort((a, b) => b.createdAt.localeCompare(a.createdAt));
      const victim = newestFirst[300]?._id;
      store.db.exec(`CREATE TRIGGER refuse BEFORE INSERT ON bookings WHEN NEW.id = '${victim}'
        BEGIN SELECT RAISE(ABORT, 'disk says no'); END`);
      const logger = memoryLogger();
      const api = createApiClient({ baseUrl: sim.url, token: "sim-token" });
      const deps = {
        api,
        store,
        clock: { now: () => new Date() },
        logger,
        signal: new AbortController().signal,
      };
      // No lookback: a resumed walk that skipped anything would leave it out for good.
      const options = { pageSize: 50, lookbackSeconds: 0, batchPages: 2 };
      const failed = await runSync(deps, options);
      expect(failed.status).toBe("failed");
      expect(failed.error?.message).toMatch(/disk says no/);
      store.db.exec("DROP TRIGGER refuse");
      const again = await runSync(deps, options);
      expect(again.status).toBe("success");
      const source = sim
        .allSummaries()
        .map((b) => b._id)
        .sort();
      expect(ids(store)).toEqual(source);
    } finally {
      await sim.close();
    }
  });

  it("mirrors every booking over real HTTP, resumes after an abort, and a rerun changes nothing", async () => {
    const sim = await startSimulator({ seed: 3, bookings: 2500, tieRun: 3, faultRate: 0.1, faultSeed: 2 });
    try {
      const store = open("sync.db", true);
      const logger = memoryLogger();
      const api = createApiClient({
        baseUrl: sim.url,
        token: "sim-token",
        minBackoffMs: 1,
        maxBackoffMs: 5,
        logger,
      });
      const clock = { now: () => new Date() };
      const options = { pageSize: 50, lookbackSeconds: 600, batchPages: 3 };
      // Abort part-way: the pages stored so far stay, with their progress, and the next run resumes.
      const controller = new AbortController();
      const onPage = (e: { pages: number }) => {
        if (e.pages === 20) controller.abort(new Error("shutdown"));
      };
      const aborted = await runSync(
        { api, store, clock, logger, signal: controller.signal },
        { ...options, onPage },
      );
      expect(aborted.status).toBe("aborted");
      expect(store.readStream("feed").walk?.pages).toBeGreaterThanOrEqual(18);
      expect(store.countBookings()).toBe(aborted.inserted);

      const signal = new AbortController().signal;
      const cold = await runSync({ api, store, clock, logger, signal }, options);
      expect(cold.status).toBe("success");
      expect(aborted.inserted + cold.inserted).toBe(2500);
      const source = sim
        .allSummaries()
        .map((b) => b._id)
        .sort();
      expect(ids(store)).toEqual(source);
      expect(store.readStream("feed")).toMatchObject({ walk: null, checkpoint: cold.checkpointAfter });

      const again = await runSync({ api, store, clock, logger, signal }, options);
      expect(again).toMatchObject({ status: "success", inserted: 0, updated: 0 });
      expect(again.checkpointAfter).toBe(cold.checkpointAfter);
    } finally {
      await sim.close();
    }
  });
});
