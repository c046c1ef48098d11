/**
 * A mirror far behind its source filled by the sync itself (src/sync/fill/): slices of time walked at
 * once, details read at once, through the real simulator on 127.0.0.1 and real mirrors. Slices must
 * meet with nothing lost at ties on their bounds under either cursor rule, a delete plus an insert
 * while the fill reads must lose nothing, and a typed stream's fill holds its type.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { Behaviour } from "../src/simulator/index.js";
import { createRng } from "../src/simulator/random.js";
import { type FillProgress, isFill } from "../src/sync/fill/progress.js";
import type { StreamState } from "../src/sync/ports.js";
import { type CountingProxy, countingProxy } from "./support/counting-proxy.js";
import { committedRows, unbackedClaims } from "./support/fill-claims.js";
import { type Harness, harness, runCli } from "./support/harness.js";
import { expectMirrorHoldsSourceInFull, pageOf } from "./support/list-deps.js";
import { type MirrorHarness, mirrorHarness } from "./support/mirror-harness.js";
import { describeBackends } from "./support/postgres.js";

let h: Harness | undefined;
let m: MirrorHarness | undefined;
let proxy: CountingProxy | undefined;
afterEach(async () => {
  await proxy?.close();
  await h?.close();
  await m?.close();
  h = m = proxy = undefined;
});

const SLICING = "the mirror is far behind the source: reading it in slices of time at once";

/** The saved fills among stream states read during a run. */
const fills = (states: StreamState[]): FillProgress[] =>
  states.flatMap((s) => (s.walk !== null && isFill(s.walk) ? [s.walk] : []));

/** The mirror holds exactly the ids the source serves (of `type`), every one with its details. */
async function expectEveryBookingDetailed(mh: MirrorHarness, type?: "IN" | "LC"): Promise<void> {
  expect(await mh.mirrorIds()).toEqual(mh.sourceIds(type));
  const bare = await mh.query<{ n: number }>("SELECT count(*) AS n FROM bookings WHERE detail_json IS NULL");
  expect(bare).toEqual([{ n: 0 }]);
}

describeBackends("a fill from an empty mirror", (backend) => {
  it("reads a few thousand bookings in slices with every detail, then syncs with two requests", async () => {
    m = await mirrorHarness(backend, { bookings: 4000 });
    const mh = m;
    // Read after pages are saved: the store commits every 20, so some show the fill under way.
    const during: Array<StreamState | Promise<StreamState>> = [];
    const report = await mh.sync({
      concurrency: 8,
      details: true,
      onProgress: () => void during.push(mh.mirror.readStream("feed")),
    });
    expect(report.status, report.error?.message).toBe("success");
    expect(mh.logger.lines.some((l) => l.msg === SLICING)).toBe(true);
    const underWay = fills(await Promise.all(during));
    expect(underWay.length).toBeGreaterThan(0);
    for (const f of underWay) expect(f.sliceCount).toBeGreaterThan(1);
    await expectEveryBookingDetailed(mh);
    expect(await mh.mirror.readStream("feed")).toEqual({
      stream: "feed",
      checkpoint: mh.sim.allSummaries()[0]?.createdAt,
      walk: null,
    });

    // Steady state: the feed's newest page and the source's total.
    mh.sim.resetStats();
    const again = await mh.sync({ concurrency: 8, details: true });
    expect(again).toMatchObject({ status: "success", inserted: 0, updated: 0 });
    expect(mh.sim.stats.byEndpoint).toEqual({ feed: 1, list: 1, other: 0 });
  });

  it("a typed stream's fill holds its type, every booking of it, with details", async () => {
    m = await mirrorHarness(backend, { bookings: 3000 });
    const report = await m.sync({ bookingType: "IN", concurrency: 8, details: true });
    expect(report.status, report.error?.message).toBe("success");
    expect(m.logger.lines.some((l) => l.msg === SLICING)).toBe(true);
    expect(m.sourceIds("IN").length).toBeGreaterThan(500);
    expect(m.sourceIds("LC").length).toBeGreaterThan(500);
    await expectEveryBookingDetailed(m, "IN");
    expect(await m.query("SELECT DISTINCT booking_type FROM bookings")).toEqual([{ booking_type: "IN" }]);
    const stream = await m.mirror.readStream("feed:IN");
    expect(stream.walk).toBeNull();
    expect(stream.checkpoint).toBe(m.sim.allSummaries({ bookingType: "IN" })[0]?.createdAt);
    expect((await m.mirror.readStream("feed")).checkpoint).toBeNull();
  });
});

describe("slices meet with no gap and no loss at ties on their bounds", () => {
  // 2,000 bookings in pages of 20 at concurrency 2: four slices, bounded by the bookings at list
  // positions 500, 1000 and 1500. In runs of 3 those fall at a run's newest, oldest and middle
  // booking; in runs of 70 (longer than a page, read through list-bookings) inside a run each.
  it.each<[Behaviour["cursor"], number]>([
    ["exclusive", 3],
    ["inclusive", 3],
    ["exclusive", 70],
    ["inclusive", 70],
  ])("with a %s cursor and tie runs of %i", async (cursor, tieRun) => {
    h = await harness({ bookings: 2000, tieRun, cursor, pageSize: 20 });
    const source = h.sim.allSummaries();
    // The plan's probes: the pages of one after the source's total (page 1) and before the walk.
    const probed: number[] = [];
    let phase: "before" | "planning" | "walking" = "before";
    h.sim.events.on("request", (e) => {
      const one = e.endpoint === "list" && new URL(e.url, "http://x").searchParams.get("pageSize") === "1";
      if (phase === "before" && one && pageOf(e.url) === 1) phase = "planning";
      else if (phase === "planning" && e.endpoint === "feed") phase = "walking";
      else if (phase === "planning" && one) probed.push(pageOf(e.url) - 1);
    });
    const report = await h.sync({ concurrency: 2 });
    expect(report.status, report.error?.message).toBe("success");
    expect(probed.sort((a, b) => a - b)).toEqual([500, 1000, 1500]);
    for (const position of probed) {
      const at = source[position]?.createdAt;
      const tied = source.filter((b) => b.createdAt === at).length;
      expect(tied).toBe(tieRun);
    }
    if (tieRun === 3)
      // A bound at the run's newest, oldest and middle booking.
      expect(
        probed.map((p) =>
          [source[p - 1]?.createdAt, source[p + 1]?.createdAt].map((t) => t === source[p]?.createdAt),
        ),
      ).toEqual([
        [false, true],
        [true, false],
        [true, true],
      ]);
    // Inside a run of 70: bookings of its time on either side of the bound, more than a page of them.
    else for (const p of probed) expect(source[p - 1]?.createdAt).toBe(source[p + 1]?.createdAt);
    expect(report.tieOverflows).toEqual([]);
    expect(h.mirrorIds()).toEqual(h.sourceIds());
    expect(report.inserted).toBe(2000);
  });
});

describe("a delete plus an insert while the fill reads", () => {
  // 3,000 bookings at concurrency 8: 3 slices (about 33 requests), then 31 details pages. The
  // change comes while the slices are probed, while they are walked, and while details are read.
  it.each([3, 10, 25, 40, 55])("after %i requests, loses nothing", async (k) => {
    h = await harness({ bookings: 3000, latencyMs: 2 });
    const hh = h;
    const atStart = hh.sourceIds();
    // An old booking: its removal shifts every newer one a list position up, the insert one down.
    const deleted = hh.sim.allSummaries().at(-101)?._id;
    let requests = 0;
    hh.sim.events.on("request", () => {
      if (++requests !== k) return;
      hh.sim.remove(100);
      hh.sim.insert(1);
    });
    const report = await hh.sync({ concurrency: 8, details: true });
    expect(report.status, report.error?.message).toBe("success");
    expect(requests).toBeGreaterThan(k);
    const wanted = new Set([...atStart.filter((id) => id !== deleted), ...hh.sourceIds()]);
    expect(wanted.size).toBe(3000);
    const { ids, detailed } = committedRows(hh.dbPath);
    expect([...wanted].filter((id) => !ids.has(id))).toEqual([]);
    expect([...wanted].filter((id) => !detailed.has(id))).toEqual([]);
  });
});

describe("a fill of a mirror with a checkpoint", () => {
  it("fills only what is newer than the checkpoint, in slices, and holds the source in full", async () => {
    h = await harness({ bookings: 1000 });
    expect((await h.sync({ concurrency: 8, details: true })).status).toBe("success");
    h.sim.insert(3000);
    h.logger.lines.length = 0;
    h.sim.resetStats();
    const report = await h.sync({ concurrency: 8, details: true });
    expect(report.status, report.error?.message).toBe("success");
    expect(h.logger.lines.some((l) => l.msg === SLICING)).toBe(true);
    expect(report.inserted).toBe(3000);
    // The new stretch and the lookback's margin, not a re-walk of the 1,000 already there.
    expect(h.sim.stats.byEndpoint.feed).toBeLessThan(40);
    expectMirrorHoldsSourceInFull(h);
  });
});

describe("a fill killed at random points (the CLI, SIGKILL)", () => {
  const seeds = process.env.FILL_KILL_SEED ? [Number(process.env.FILL_KILL_SEED)] : [24, 1127];
  // A whole fill of 3,000 bookings at SYNC_CONCURRENCY=4 takes some 66 requests: each round is
  // killed after a seeded number of them (the store commits every 20 pages, so an early kill
  // saves nothing), the saved fill must be backed by its rows, and the run after the last kill
  // resumes it and completes.
  it.each(seeds)(
    "resumes its unfinished slices and completes (seed %i; FILL_KILL_SEED=<seed> to replay)",
    async (seed) => {
      h = await harness({ bookings: 3000, latencyMs: 5 });
      proxy = await countingProxy(h.sim.url);
      const p = proxy;
      const env = h.env({ BOOKING_API_BASE_URL: p.url, SYNC_CONCURRENCY: "4", LOG_LEVEL: "info" });
      const rng = createRng(seed);
      const kills: number[] = [];
      const context = () => `seed ${seed}, killed after ${kills.join(", ")} requests`;
      let left: FillProgress | null = null;
      for (let round = 0; round < 5; round++) {
        // Somewhere in what is left of the fill (its own count, once one is saved), the few requests
        // before it (the source check, its total, the probes) included.
        const at = rng.int(1, left === null ? 66 : Math.max(1, left.plannedPages - left.pages) + 4);
        kills.push(at);
        p.reset();
        const run = await runCli(["sync"], env, (child) => {
          p.events.on("arrive", (n) => n >= at && child.kill("SIGKILL"));
        });
        p.events.removeAllListeners("arrive");
        await p.settled();
        if (run.signal !== "SIGKILL") {
          expect(run.code, `${context()}: ${run.stderr}`).toBe(0);
          break;
        }
        left = savedFill(h);
        if (left === null) continue;
        const unbacked = unbackedClaims(left, h.sim, committedRows(h.dbPath));
        expect({ rows: unbacked.rows, details: unbacked.details }, context()).toEqual({
          rows: [],
          details: [],
        });
      }
      const last = await runCli(["sync"], env);
      expect(last.code, `${context()}: ${last.stderr}`).toBe(0);
      if (left !== null)
        expect(`${last.stdout}${last.stderr}`, context()).toContain("resuming the unfinished walk");
      expect(h.store.readStream("feed"), context()).toEqual({
        stream: "feed",
        checkpoint: h.sim.allSummaries()[0]?.createdAt,
        walk: null,
      });
      try {
        expectMirrorHoldsSourceInFull(h);
      } catch (err) {
        throw new Error(`${context()}: ${(err as Error).message}`, { cause: err });
      }
    },
  );
});

/** The feed stream's saved fill (committed), or null. */
function savedFill(hh: Harness): FillProgress | null {
  const walk = hh.store.readStream("feed").walk;
  if (walk !== null && !isFill(walk)) throw new Error("the feed's progress is not a fill");
  return walk;
}
