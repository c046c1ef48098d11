/**
 * The status page's reads off the event loop (store/status-worker.ts) on a real SQLite mirror: a long
 * statement leaves the loop free where the in-loop reader holds it, the thread starts at the first
 * read and ends at close or once idle, and the store's page reads go through it.
 */
import { readdirSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { readStatusPage } from "../src/store/daily.js";
import { type Snapshot, sqliteSnapshot } from "../src/store/snapshot.js";
import { THREAD_IDLE_MS, workerSnapshot } from "../src/store/status-worker.js";
import { fixedClock } from "./support/fakes.js";
import { analyst, type Harness, harness } from "./support/harness.js";

/** A statement that keeps SQLite busy for a good while (hundreds of ms) and touches no table. */
const LONG = `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 3000000)
  SELECT count(*) AS c FROM n`;
const AT = new Date("2025-05-25T12:00:00.000Z");

/** OS threads of this process (Linux): a worker thread is one of them while it runs. */
const threads = () => readdirSync("/proc/self/task").length;

let h: Harness | undefined;
const closers: Array<() => unknown> = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
  await h?.close();
  h = undefined;
});

/** Whether a 0 ms timer fires before `snapshot` finishes LONG: it does only if the loop stays free. */
async function timerFirst(snapshot: Snapshot): Promise<string[]> {
  const order: string[] = [];
  const query = snapshot((db) => db.all<{ c: number }>(LONG)).then(([row]) => {
    order.push(`query ${row?.c}`);
  });
  await new Promise((resolve) => setTimeout(resolve, 0));
  order.push("timer");
  await query;
  return order;
}

describe("status reads in a worker thread", () => {
  it("leave the event loop free during a long statement, which the in-loop reader holds", async () => {
    h = await harness({ bookings: 1 });
    const worker = workerSnapshot(h.dbPath);
    closers.push(() => worker.close());
    expect(await timerFirst(worker)).toEqual(["timer", "query 3000001"]);

    // The control: the same statement on a connection of this thread runs before the timer can fire.
    const db = analyst(h.dbPath);
    closers.push(() => db.close());
    expect(await timerFirst(sqliteSnapshot(db, h.dbPath))).toEqual(["query 3000001", "timer"]);
  });

  it("start the thread at the first read, not before, and end it at close", async () => {
    h = await harness({ bookings: 50 });
    expect((await h.sync()).status).toBe("success");
    const before = threads();
    const worker = workerSnapshot(h.dbPath);
    expect(threads()).toBe(before);
    const page = await worker((r) => readStatusPage(r, AT));
    expect(page.status.bookings.total).toBe(50);
    expect(threads()).toBeGreaterThan(before);
    await worker.close();
    expect(threads()).toBe(before);
    await expect(worker((r) => readStatusPage(r, AT))).rejects.toThrow(/the mirror is closed/);
  });

  it("end the thread once idle, not while reads follow each other; the next read starts another", async () => {
    h = await harness({ bookings: 3 });
    expect((await h.sync()).status).toBe("success");
    const before = threads();
    // The thread's idle time runs on a clock the test moves: a slow host's gaps never end it early.
    const clock = fixedClock(AT.getTime());
    const worker = workerSnapshot(h.dbPath, clock);
    closers.push(() => worker.close());
    // A connection's own setting shows whether two reads met the same thread's connection.
    const cacheSize = async () =>
      (await worker((db) => db.all<{ cache_size: number }>("PRAGMA cache_size")))[0];
    await worker((db) => db.all("PRAGMA cache_size = -1234"));
    for (let i = 0; i < 5; i++) {
      // Each read comes just before the thread would end: it is the same thread every time.
      clock.advance(THREAD_IDLE_MS - 1);
      expect(await cacheSize()).toEqual({ cache_size: -1234 });
    }
    clock.advance(THREAD_IDLE_MS);
    // The OS thread exits a moment after it is told to: polled for, with room for a loaded host.
    await expect.poll(threads, { timeout: 30_000 }).toBe(before);
    const [row] = await worker((db) => db.all<{ n: number }>("SELECT count(*) AS n FROM bookings"));
    expect(row?.n).toBe(3);
    expect(threads()).toBeGreaterThan(before);
    expect(await cacheSize()).not.toEqual({ cache_size: -1234 });
  });

  it("give the reads' own errors to the caller, and the next read still works", async () => {
    h = await harness({ bookings: 5 });
    expect((await h.sync()).status).toBe("success");
    const worker = workerSnapshot(h.dbPath);
    closers.push(() => worker.close());
    await expect(worker((db) => db.all("SELECT * FROM no_such_table"))).rejects.toThrow(
      /no such table: no_such_table/,
    );
    const [row] = await worker((db) => db.all<{ n: number }>("SELECT count(*) AS n FROM bookings"));
    expect(row?.n).toBe(5);
    // A file that is not there fails the read that needed it, not the process.
    const missing = workerSnapshot(`${h.dbPath}.absent`);
    closers.push(() => missing.close());
    await expect(missing((db) => db.all("SELECT 1"))).rejects.toThrow(/unable to open database file/);
  });

  it("are what the store's page reads use: the page reflects committed rows, the thread ends with the store", async () => {
    h = await harness({ bookings: 40 });
    expect((await h.sync()).status).toBe("success");
    const before = threads();
    const { status } = await h.store.readStatusPage(AT);
    expect(status.bookings.total).toBe(40);
    expect(threads()).toBeGreaterThan(before);
    h.store.close();
    await expect.poll(threads).toBe(before);
    await expect(h.store.readStatusPage(AT)).rejects.toThrow(/the mirror is closed/);
  });
});
