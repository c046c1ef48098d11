/**
 * `backfill`: the sync's fill asked to read everything, through the real simulator and SQLite. Its
 * progress is the feed stream's `FillProgress`; whatever a stopped or failed run saved must be backed
 * by the rows committed with it (test/support/fill-claims.ts).
 */
import { afterEach, describe, expect, it } from "vitest";
import { errorText } from "../src/daemon/error-text.js";
import { FEED_STREAMS, runBackfill } from "../src/sync/backfill/backfill.js";
import { type FillProgress, isFill } from "../src/sync/fill/progress.js";
import { type CountingProxy, countingProxy } from "./support/counting-proxy.js";
import { committedRows, unbackedClaims } from "./support/fill-claims.js";
import { analyst, type Harness, harness, runCli } from "./support/harness.js";
import { expectMirrorHoldsSourceInFull, listDeps, mirrorDigest, pageOf } from "./support/list-deps.js";

let h: Harness | undefined;
let proxy: CountingProxy | undefined;
afterEach(async () => {
  await proxy?.close();
  await h?.close();
  h = proxy = undefined;
});

/** The feed stream's saved fill (committed), or null. */
function savedFill(hh: Harness): FillProgress | null {
  const walk = hh.store.readStream("feed").walk;
  if (walk !== null && !isFill(walk)) throw new Error("the feed's progress is not a fill");
  return walk;
}

/** The saved fill's claims that the committed rows do not back: none, and at least one claim. */
function expectClaimsBacked(hh: Harness, fill: FillProgress): void {
  const unbacked = unbackedClaims(fill, hh.sim, committedRows(hh.dbPath));
  expect({ rows: unbacked.rows, details: unbacked.details }).toEqual({ rows: [], details: [] });
  expect(unbacked.claimed.rows + unbacked.claimed.details).toBeGreaterThan(0);
}

/**
 * Commits every second page, so a run that fails part-way has committed progress to check: a page
 * that fails loses the pages saved since the last commit with it.
 */
const FAILING_BATCH = { pages: 2, ms: 1_000 };

/** The newest booking's createdAt, as the checkpoint stores it. */
const newestAt = (hh: Harness) => hh.sim.allSummaries()[0]?.createdAt;

describe("backfill", () => {
  it("mirrors a few thousand bookings in full, with packages and items, and sets the feed checkpoints", async () => {
    h = await harness({ bookings: 2500 });
    const report = await runBackfill(listDeps(h), { concurrency: 4 });
    expect(report).toMatchObject({
      status: "success",
      stream: "feed",
      inserted: 2500,
      updated: 0,
      resumed: false,
    });
    expectMirrorHoldsSourceInFull(h);
    expect(report.checkpointAfter).toBe(newestAt(h));
    for (const stream of FEED_STREAMS)
      expect(h.store.readStream(stream).checkpoint).toBe(report.checkpointAfter);
    expect(h.store.readProgress("feed").progress).toBeNull();
    expect(h.store.lastRun("backfill")).toMatchObject({ status: "success", bookingsNew: 2500 });
    // In slices: each read its stretch of the feed once, and every list page was read for details.
    expect(h.logger.lines.some((l) => l.msg?.includes("reading it in slices of time at once"))).toBe(true);
  });

  it("run twice, changes nothing the second time", async () => {
    h = await harness({ bookings: 1200 });
    await runBackfill(listDeps(h), { concurrency: 3 });
    const before = mirrorDigest(h);
    const again = await runBackfill(listDeps(h), { concurrency: 3 });
    expect(again).toMatchObject({ status: "success", inserted: 0, updated: 0, resumed: false });
    expect(again.unchanged).toBeGreaterThanOrEqual(1200);
    expect(mirrorDigest(h)).toBe(before);
  });

  it("keeps at most `concurrency` requests in flight, and reaches it", async () => {
    h = await harness({ bookings: 2000, latencyMs: 20 });
    proxy = await countingProxy(h.sim.url);
    // As the CLI wires it: SYNC_CONCURRENCY bounds the client, whatever the fill asks of it.
    const deps = listDeps(h, { baseUrl: proxy.url, maxInFlight: 3 });
    const report = await runBackfill(deps, { concurrency: 8 });
    expect(report.status).toBe("success");
    expect(proxy.maxInFlight).toBe(3);
    expectMirrorHoldsSourceInFull(h);
  });

  it("a 429 pauses every request, not only the one that got it", async () => {
    h = await harness({ bookings: 3000, latencyMs: 20 });
    let limitedAt: number | undefined;
    const answeredAt: number[] = [];
    h.sim.events.on("request", (e) => {
      if (e.status === 429) limitedAt = performance.now();
      else answeredAt.push(performance.now());
    });
    // Once the slices walk: the other slices and the details pages had some 50 pages left to read.
    void h.sim
      .nextRequest((e) => e.endpoint === "feed")
      .then(() => h?.sim.inject({ kind: "429", retryAfter: 2 }, { path: "feed", times: 1 }));
    const report = await runBackfill(listDeps(h, { maxRetryAfterMs: 5000 }), { concurrency: 4 });
    expect(report).toMatchObject({ status: "success", retries: 1, inserted: 3000 });
    // Requests already on their way when the 429 came are answered at once (half a second is left
    // for them on a busy machine); nothing else is sent until the 2 s are over.
    const at = limitedAt as number;
    expect(answeredAt.filter((t) => t > at + 500 && t < at + 1900)).toEqual([]);
    expect(answeredAt.filter((t) => t >= at + 1900).length).toBeGreaterThan(10);
    expectMirrorHoldsSourceInFull(h);
  });

  it("stays complete while bookings arrive during the fill, and the next sync adds only the new ones", async () => {
    h = await harness({ bookings: 2000, latencyMs: 5 });
    const atStart = h.sourceIds();
    let arrivals = 0;
    h.sim.events.on("request", () => {
      if (arrivals < 15) {
        arrivals++;
        h?.sim.insert(7);
      }
    });
    const report = await runBackfill(listDeps(h), { concurrency: 4 });
    expect(report.status).toBe("success");
    const { ids, detailed } = committedRows(h.dbPath);
    expect(atStart.filter((id) => !ids.has(id))).toEqual([]);
    expect(atStart.filter((id) => !detailed.has(id))).toEqual([]);
    const sync = await h.sync({ details: true });
    expect(sync.status).toBe("success");
    expectMirrorHoldsSourceInFull(h);
    // From the fill's checkpoint: the 105 arrivals plus the lookback, not a re-walk of 2000.
    expect(sync.pages).toBeLessThanOrEqual(4);
  });

  it("backfills one source platform from its list pages alone, without touching the feed checkpoints", async () => {
    h = await harness({ bookings: 1500 });
    const urls: string[] = [];
    h.sim.events.on("request", (e) => urls.push(e.url));
    const report = await runBackfill(listDeps(h), { concurrency: 2, sourcePlatform: "web" });
    expect(report).toMatchObject({ status: "success", stream: "backfill:web", checkpointAfter: null });
    expectMirrorHoldsSourceInFull(h, { sourcePlatform: "web" });
    expect(h.store.readStream("feed")).toMatchObject({ checkpoint: null, walk: null });
    expect(h.sim.stats.byEndpoint.feed).toBe(0);
    expect(urls.filter((u) => new URL(u, "http://x").searchParams.get("sourcePlatform") !== "web")).toEqual(
      [],
    );
  });

  it("an aborted backfill resumes by default and starts over with restart", async () => {
    h = await harness({ bookings: 2000, latencyMs: 5 });
    const full = await harness({ bookings: 2000, latencyMs: 5 });
    const fullRun = await runBackfill(listDeps(full), { concurrency: 2 }).finally(() => full.close());
    const stop = new AbortController();
    h.sim.events.on("request", () => {
      if (h && h.sim.stats.requests >= 14) stop.abort(new Error("test stop"));
    });
    const aborted = await runBackfill(listDeps(h, { signal: stop.signal }), { concurrency: 2 });
    expect(aborted.status).toBe("aborted");
    const saved = savedFill(h);
    expect(saved?.slices.length).toBeGreaterThan(0);
    expectClaimsBacked(h, saved as FillProgress);
    h.logger.lines.length = 0;
    const resumed = await runBackfill(listDeps(h), { concurrency: 2 });
    expect(resumed).toMatchObject({ status: "success", resumed: true });
    expect(h.logger.lines.some((l) => l.msg === "resuming the unfinished walk")).toBe(true);
    // What the stopped run saved is not read again.
    expect(resumed.requests).toBeLessThan(fullRun.requests);
    expectMirrorHoldsSourceInFull(h);
    const restarted = await runBackfill(listDeps(h), { mode: "restart" });
    expect(restarted).toMatchObject({ status: "success", resumed: false, inserted: 0, updated: 0 });
    expect(restarted.unchanged).toBeGreaterThanOrEqual(2000);
  });

  it("a page that cannot be stored fails the run, the progress saved is backed by its rows, and the rerun completes", async () => {
    h = await harness({ bookings: 2000, latencyMs: 5, storeBatch: FAILING_BATCH });
    // SQLite itself refuses the write once 700 bookings are in, whichever page that falls on.
    h.store.db.exec(`CREATE TRIGGER refuse BEFORE INSERT ON bookings WHEN (SELECT count(*) FROM bookings) >= 700
      BEGIN SELECT RAISE(ABORT, 'disk says no'); END`);
    const failed = await runBackfill(listDeps(h), { concurrency: 4 });
    expect(failed.status).toBe("failed");
    expect(errorText(failed.error)).toMatch(/disk says no/);
    // The batch that met the 700th booking was rolled back whole, and nothing was stored after it.
    expect(h.mirrorIds().length).toBeLessThan(700);
    expectClaimsBacked(h, savedFill(h) as FillProgress);

    h.store.db.exec("DROP TRIGGER refuse");
    const resumed = await runBackfill(listDeps(h), { concurrency: 4 });
    expect(resumed).toMatchObject({ status: "success", resumed: true });
    expectMirrorHoldsSourceInFull(h);
  });

  it("a failed run records the bookings its committed pages hold, not those its lost batch took back", async () => {
    h = await harness({ bookings: 2000, latencyMs: 5 }); // the product's batch: 20 pages or a second
    h.store.db.exec(`CREATE TRIGGER refuse BEFORE INSERT ON bookings WHEN (SELECT count(*) FROM bookings) >= 700
      BEGIN SELECT RAISE(ABORT, 'disk says no'); END`);
    const failed = await runBackfill(listDeps(h), { concurrency: 4 });
    expect(failed.status).toBe("failed");
    const db = analyst(h.dbPath);
    try {
      const run = db
        .prepare("SELECT status, bookings_new AS inserted FROM sync_runs WHERE id = ?")
        .get(failed.runId);
      expect(run).toEqual({ status: "failed", inserted: h.mirrorIds().length });
    } finally {
      db.close();
    }
  });

  it("a feed page that fails is not counted saved by the slices still walking; the rerun reads it", async () => {
    h = await harness({ bookings: 2000, latencyMs: 5, storeBatch: FAILING_BATCH });
    // On the newest slice's second page: the other slice has some eight pages left to walk and save.
    const victim = h.sim.allSummaries()[150]?._id;
    h.store.db.exec(`CREATE TRIGGER refuse BEFORE INSERT ON bookings WHEN NEW.id = '${victim}'
      BEGIN SELECT RAISE(ABORT, 'disk says no'); END`);
    const failed = await runBackfill(listDeps(h), { concurrency: 4 });
    expect(failed.status).toBe("failed");
    expect(errorText(failed.error)).toMatch(/disk says no/);
    expectClaimsBacked(h, savedFill(h) as FillProgress);

    h.store.db.exec("DROP TRIGGER refuse");
    const resumed = await runBackfill(listDeps(h), { concurrency: 4 });
    expect(resumed).toMatchObject({ status: "success", resumed: true });
    expectMirrorHoldsSourceInFull(h);
  });

  it("a details page that fails is not counted read by the pages still in flight; the rerun reads it", async () => {
    h = await harness({ bookings: 2000, latencyMs: 5, storeBatch: FAILING_BATCH });
    // On details page 5 of 21, read four at a time: pages after it are in flight when it fails.
    const victim = h.sim.allSummaries()[450]?._id;
    h.store.db.exec(`CREATE TRIGGER refuse BEFORE UPDATE ON bookings
      WHEN NEW.id = '${victim}' AND NEW.detail_json IS NOT NULL
      BEGIN SELECT RAISE(ABORT, 'disk says no'); END`);
    const failed = await runBackfill(listDeps(h), { concurrency: 4 });
    expect(failed.status).toBe("failed");
    expect(errorText(failed.error)).toMatch(/disk says no/);
    expectClaimsBacked(h, savedFill(h) as FillProgress);

    h.store.db.exec("DROP TRIGGER refuse");
    const resumed = await runBackfill(listDeps(h), { concurrency: 4 });
    expect(resumed).toMatchObject({ status: "success", resumed: true });
    expectMirrorHoldsSourceInFull(h);
  });
});

describe("backfill CLI", () => {
  it("killed with SIGKILL mid-way, resumes without starting over and ends complete", async () => {
    h = await harness({ bookings: 6000, latencyMs: 15 });
    proxy = await countingProxy(h.sim.url);
    const p = proxy;
    const env = h.env({ LOG_LEVEL: "warn", BOOKING_API_BASE_URL: p.url });
    const killed = await runCli(["backfill", "--concurrency", "2"], env, (child) => {
      // By the 40th request some 30 pages were saved: the store's batch rule (20 pages) committed some.
      p.events.on("arrive", (n) => n >= 40 && child.kill("SIGKILL"));
    });
    expect(killed.signal).toBe("SIGKILL");
    await p.settled();
    const saved = savedFill(h);
    expect(saved).not.toBeNull();
    expectClaimsBacked(h, saved as FillProgress);
    const kept = h.mirrorIds().length;
    expect(kept).toBeGreaterThan(0);
    expect(kept).toBeLessThan(6000);

    p.reset();
    h.sim.resetStats();
    const lists: number[] = [];
    h.sim.events.on("request", (e) => {
      if (e.endpoint === "list" && e.url.includes("pageSize=100")) lists.push(pageOf(e.url));
    });
    const resumed = await runCli(["backfill"], env);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toMatch(/^backfill feed \(resumed\): \d+ new, 0 updated/);
    // Not started over: no more feed pages than the stretches left, no details page read twice.
    const fresh = 6000 / 100;
    expect(h.sim.stats.byEndpoint.feed).toBeLessThan(fresh);
    const readBefore = new Set((saved?.details?.read ?? []).flatMap(([a, b]) => range(a, b)));
    expect(lists.filter((page) => readBefore.has(page))).toEqual([]);
    expect(new Set(lists).size).toBe(lists.length);
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
    expect(run.stdout).toMatch(/^backfill feed: 4000 new, 0 updated/);
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
    const blank = await runCli(["backfill", "--source-platform", " "], h.env());
    expect(blank.code).toBe(2);
    expect(blank.stderr).toContain('--source-platform = "" is not valid');
  });
});

function range(from: number, to: number): number[] {
  return Array.from({ length: to - from + 1 }, (_, i) => from + i);
}
