import { afterEach, describe, expect, it } from "vitest";
import { startSimulator } from "../src/simulator/index.js";
import {
  type BackfillState,
  backfillStream,
  FEED_STREAMS,
  runBackfill,
} from "../src/sync/backfill/backfill.js";
import { type Harness, harness, runCli } from "./support/harness.js";
import {
  expectMirrorHoldsSourceInFull,
  listDeps,
  measured,
  mirrorDigest,
  pageOf,
} from "./support/list-deps.js";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** List requests by page number, counted from the simulator's own request events. */
function countListPages(sim: Harness["sim"]): Map<number, number> {
  const pages = new Map<number, number>();
  sim.events.on("request", (e) => {
    if (e.endpoint === "list" && e.status === 200)
      pages.set(pageOf(e.url), (pages.get(pageOf(e.url)) ?? 0) + 1);
  });
  return pages;
}

describe("backfill", () => {
  it("mirrors a few thousand bookings in full, with packages and items, and sets the feed checkpoints", async () => {
    h = await harness({ bookings: 2500 });
    const report = await runBackfill(listDeps(h), { concurrency: 4 });
    expect(report).toMatchObject({
      status: "success",
      inserted: 2500,
      updated: 0,
      pages: 25,
      rereadPages: 0,
    });
    expectMirrorHoldsSourceInFull(h);
    for (const stream of FEED_STREAMS)
      expect(h.store.readStream(stream).checkpoint).toBe(report.backfillStartedAt);
    expect(h.store.readProgress("backfill").progress).toBeNull();
    expect(h.store.lastRun("backfill")).toMatchObject({ status: "success", bookingsNew: 2500, pages: 25 });
  });

  it("run twice, changes nothing the second time", async () => {
    h = await harness({ bookings: 1200 });
    await runBackfill(listDeps(h), { concurrency: 3 });
    const before = mirrorDigest(h);
    const again = await runBackfill(listDeps(h), { concurrency: 3 });
    expect(again).toMatchObject({ status: "success", inserted: 0, updated: 0, unchanged: 1200 });
    expect(mirrorDigest(h)).toBe(before);
  });

  it("keeps at most `concurrency` pages in flight, and reaches it", async () => {
    h = await harness({ bookings: 2000, latencyMs: 20 });
    const deps = listDeps(h);
    const api = measured(deps.api);
    const report = await runBackfill({ ...deps, api }, { concurrency: 3 });
    expect(report.status).toBe("success");
    expect(api.maxInFlight).toBe(3);
    expect(h.sim.stats.byEndpoint.list).toBe(20);
  });

  it("honours 429 Retry-After for the page that got it, and still completes", async () => {
    h = await harness({ bookings: 800, latencyMs: 5 });
    const limited = new Map<string, number>();
    const retriedAfterMs: number[] = [];
    h.sim.events.on("request", (e) => {
      if (e.endpoint !== "list") return;
      const at = performance.now();
      if (e.status === 429) limited.set(e.url, at);
      else if (e.status === 200 && limited.has(e.url)) retriedAfterMs.push(at - (limited.get(e.url) ?? at));
    });
    // After page 1 (read alone for the total), so two pages of the pool are limited at once.
    void h.sim
      .nextRequest()
      .then(() => h?.sim.inject({ kind: "429", retryAfter: 1 }, { path: "list", times: 2 }));
    const report = await runBackfill(listDeps(h, { maxRetryAfterMs: 5000 }), { concurrency: 4 });
    expect(report).toMatchObject({ status: "success", retries: 2, inserted: 800 });
    expect(retriedAfterMs).toHaveLength(2);
    for (const ms of retriedAfterMs) expect(ms).toBeGreaterThanOrEqual(950);
    expectMirrorHoldsSourceInFull(h);
  });

  it("a 429 pauses every worker, not only the page that got it", async () => {
    h = await harness({ bookings: 3000, latencyMs: 20 });
    let limitedAt: number | undefined;
    const answeredAt: number[] = [];
    h.sim.events.on("request", (e) => {
      if (e.endpoint !== "list") return;
      if (e.status === 429) limitedAt = performance.now();
      else answeredAt.push(performance.now());
    });
    void h.sim
      .nextRequest()
      .then(() => h?.sim.inject({ kind: "429", retryAfter: 2 }, { path: "list", times: 1 }));
    const report = await runBackfill(listDeps(h, { maxRetryAfterMs: 5000 }), { concurrency: 4 });
    expect(report).toMatchObject({ status: "success", retries: 1, inserted: 3000 });
    // Pages already on their way when the 429 came are answered at once (half a second is left for
    // them on a busy machine); nothing else is sent until the 2 s are over, though the other
    // workers had some 25 pages left to read.
    const at = limitedAt as number;
    expect(answeredAt.filter((t) => t > at + 500 && t < at + 1900)).toEqual([]);
    expect(answeredAt.filter((t) => t >= at + 1900).length).toBeGreaterThan(10);
    expectMirrorHoldsSourceInFull(h);
  });

  it("stays complete while bookings arrive during the walk, and the next sync adds only the new ones", async () => {
    h = await harness({ bookings: 2000, latencyMs: 5 });
    const atStart = h.sourceIds();
    let arrivals = 0;
    h.sim.events.on("request", (e) => {
      if (e.endpoint === "list" && arrivals < 15) {
        arrivals++;
        h?.sim.insert(7);
      }
    });
    const report = await runBackfill(listDeps(h), { concurrency: 4 });
    expect(report.status).toBe("success");
    // The last pages were read after 105 arrivals: the oldest bookings had slid past them.
    expect(report.rereadPages).toBeGreaterThan(0);
    const mirrored = new Set(h.mirrorIds());
    expect(atStart.filter((id) => !mirrored.has(id))).toEqual([]);
    const sync = await h.sync();
    expect(sync.status).toBe("success");
    expect(h.mirrorIds()).toEqual(h.sourceIds());
    // From the backfill's start: the 105 arrivals plus the lookback, not a re-walk of 2000.
    expect(sync.pages).toBeLessThanOrEqual(3);
  });

  it("backfills one source platform without touching the feed checkpoints", async () => {
    h = await harness({ bookings: 1500 });
    const report = await runBackfill(listDeps(h), { concurrency: 2, sourcePlatform: "web" });
    expect(report).toMatchObject({ status: "success", stream: "backfill:web", checkpointAfter: null });
    expectMirrorHoldsSourceInFull(h, { sourcePlatform: "web" });
    expect(h.store.readStream("feed").checkpoint).toBeNull();
  });

  it("an aborted backfill resumes by default and starts over with restart", async () => {
    h = await harness({ bookings: 2000, latencyMs: 5 });
    const stop = new AbortController();
    const pages = countListPages(h.sim);
    h.sim.events.on("request", () => {
      if ([...pages.values()].reduce((a, b) => a + b, 0) >= 6) stop.abort(new Error("test stop"));
    });
    const aborted = await runBackfill(listDeps(h, { signal: stop.signal }), { concurrency: 2 });
    expect(aborted.status).toBe("aborted");
    const saved = h.store.readProgress<BackfillState>(backfillStream(undefined)).progress;
    expect(saved?.reads.length).toBeGreaterThan(0);
    const resumed = await runBackfill(listDeps(h), {});
    expect(resumed).toMatchObject({ status: "success", resumed: true });
    expect(resumed.pages).toBe(20 - aborted.pages);
    const restarted = await runBackfill(listDeps(h), { mode: "restart" });
    expect(restarted).toMatchObject({ status: "success", resumed: false, pages: 20, unchanged: 2000 });
  });

  it("a page that cannot be stored fails the run and is not counted as read; the rerun completes", async () => {
    h = await harness({ bookings: 2000, latencyMs: 5 });
    // SQLite itself refuses the write once 700 bookings are in, whichever page that falls on.
    h.store.db.exec(`CREATE TRIGGER refuse BEFORE INSERT ON bookings WHEN (SELECT count(*) FROM bookings) >= 700
      BEGIN SELECT RAISE(ABORT, 'disk says no'); END`);
    const failed = await runBackfill(listDeps(h), { concurrency: 4 });
    expect(failed.status).toBe("failed");
    expect(failed.error?.message).toMatch(/disk says no/);
    const saved = h.store.readProgress<BackfillState>("backfill").progress;
    const done = new Set((saved?.reads ?? []).flatMap(([from, to]) => range(from, to)));
    // Rows and progress commit together, and nothing after the failure was stored.
    expect(done.size).toBe(7);
    expect(h.mirrorIds()).toHaveLength(700);

    h.store.db.exec("DROP TRIGGER refuse");
    const resumed = await runBackfill(listDeps(h), { concurrency: 4 });
    expect(resumed).toMatchObject({ status: "success", resumed: true, pages: 20 - 7, inserted: 1300 });
    expectMirrorHoldsSourceInFull(h);
  });
  it("a page that fails alone is not counted read by the pages still in flight; the rerun reads it", async () => {
    h = await harness({ bookings: 2000, latencyMs: 5 });
    const deps = listDeps(h);
    const onPage8 = (await deps.api.listBookings({ page: 8, pageSize: 100 })).records[50];
    if (!onPage8?.ok) throw new Error("the simulator served a bad record");
    h.store.db.exec(`CREATE TRIGGER refuse BEFORE INSERT ON bookings WHEN NEW.id = '${onPage8.id}'
      BEGIN SELECT RAISE(ABORT, 'disk says no'); END`);
    const failed = await runBackfill(deps, { concurrency: 4 });
    expect(failed.status).toBe("failed");
    const saved = h.store.readProgress<BackfillState>("backfill").progress;
    const done = new Set((saved?.reads ?? []).flatMap(([from, to]) => range(from, to)));
    expect(done.has(8)).toBe(false);
    expect(done.size).toBeGreaterThan(7);
    // Committed rows are exactly the pages counted read.
    expect(h.mirrorIds()).toHaveLength(done.size * 100);

    h.store.db.exec("DROP TRIGGER refuse");
    const resumed = await runBackfill(listDeps(h), { concurrency: 4 });
    expect(resumed).toMatchObject({ status: "success", resumed: true });
    expectMirrorHoldsSourceInFull(h);
  });
});

describe("backfill CLI", () => {
  it("killed with SIGKILL mid-way, resumes without re-reading a finished page and ends complete", async () => {
    // Run 2 talks to a twin simulator (same seed, same epoch: the same bookings), so requests the
    // killed process left in flight cannot be mistaken for run 2's.
    const data = { seed: 11, bookings: 6000, epochMs: Date.UTC(2025, 0, 1) };
    h = await harness({ ...data, latencyMs: 15 });
    const first = countListPages(h.sim);
    const killed = await runCli(["backfill", "--concurrency", "2"], h.env({ LOG_LEVEL: "warn" }), (child) => {
      h?.sim.events.on("request", () => {
        // The pool asks for a page only once an earlier one is saved: by the 30th request at least
        // 28 pages were, so the store's batch rule (20 pages) has committed some.
        if ([...first.values()].reduce((a, b) => a + b, 0) >= 30) child.kill("SIGKILL");
      });
    });
    expect(killed.signal).toBe("SIGKILL");
    const saved = h.store.readProgress<BackfillState>("backfill").progress;
    const done = new Set((saved?.reads ?? []).flatMap(([from, to]) => range(from, to)));
    expect(done.size).toBeGreaterThan(0);
    expect(done.size).toBeLessThan(60);
    // Rows and progress commit together: exactly the finished pages' bookings are in.
    expect(h.mirrorIds()).toHaveLength(done.size * 100);

    const twin = await startSimulator(data);
    try {
      const second = countListPages(twin);
      const env = h.env({ LOG_LEVEL: "warn", BOOKING_API_BASE_URL: twin.url });
      // Another URL is another source to the mirror until adopted (reads no API).
      expect((await runCli(["adopt-source"], env)).code).toBe(0);
      const resumed = await runCli(["backfill"], env);
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(resumed.stdout).toMatch(/^backfill backfill \(resumed\): \d+ new, 0 updated/);
      expect([...second.keys()].filter((p) => done.has(p))).toEqual([]);
      expect([...second.keys()].sort((a, b) => a - b)).toEqual(range(1, 60).filter((p) => !done.has(p)));
      expect([...second.values()].every((n) => n === 1)).toBe(true);
    } finally {
      await twin.close();
    }
    expect(h.mirrorIds()).toEqual(h.sourceIds());
    expectMirrorHoldsSourceInFull(h);
  });

  it("runs at the highest concurrency without a warning on stderr", async () => {
    // 32 requests share the run's abort signal, each listening on it: past Node's default of 10
    // listeners, Node warns of a leak unless the pool says how many to expect.
    h = await harness({ bookings: 4000, latencyMs: 20 });
    const run = await runCli(["backfill", "--concurrency", "32"], h.env({ LOG_LEVEL: "warn" }));
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toBe("");
    expect(run.stdout).toMatch(/^backfill backfill: 4000 new, 0 updated/);
    expect(h.mirrorIds()).toEqual(h.sourceIds());
  });

  it("rejects --resume with --restart, and a booking type, with exit code 2", async () => {
    h = await harness({ bookings: 10 });
    const both = await runCli(["backfill", "--resume", "--restart"], h.env());
    expect(both.code).toBe(2);
    expect(both.stderr).toContain("--resume and --restart cannot be used together");
    const typed = await runCli(["backfill", "--booking-type", "IN"], h.env());
    expect(typed.code).toBe(2);
    expect(typed.stderr).toContain("cannot filter by booking type");
  });
});

function range(from: number, to: number): number[] {
  return Array.from({ length: to - from + 1 }, (_, i) => from + i);
}
