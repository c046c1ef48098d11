/**
 * The incremental sync end to end: the bundled simulator over real HTTP, the real API client and a
 * real mirror, once in a SQLite file and once in PostgreSQL. Each test says which invariant of
 * DESIGN-NOTES it proves.
 */
import { afterEach, expect, it } from "vitest";
import type { Mirror } from "../src/store/index.js";
import { instantOf } from "../src/sync/feed/window.js";
import type { ListPage, ListQuery, PartnerApi } from "../src/sync/ports.js";
import { runSync } from "../src/sync/run-sync.js";
import type { HarnessOptions } from "./support/harness.js";
import { type MirrorHarness, mirrorHarness } from "./support/mirror-harness.js";
import { describeBackends } from "./support/postgres.js";
import { walkPosition } from "./support/walk-position.js";

let h: MirrorHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describeBackends("sync against the simulator", (backend) => {
  const harness = (options: HarnessOptions) => mirrorHarness(backend, options);

  it.each(["exclusive", "inclusive"] as const)(
    "mirrors every booking with a %s cursor and heavy ties across page boundaries",
    async (cursor) => {
      h = await harness({ bookings: 1500, tieRun: 7, cursor, pageSize: 10 });
      const report = await h.sync();
      expect(report.status).toBe("success");
      expect(report.tieOverflows).toEqual([]);
      expect(await h.mirrorIds()).toEqual(h.sourceIds());
      expect(report.inserted).toBe(1500);
    },
  );

  it("a feed page that leads into a tie run is stored before the run's list bookings, which were read after it", async () => {
    h = await harness({ bookings: 1000, tieRun: 50, pageSize: 20 });
    const sim = h.sim;
    const count = sim.allSummaries().length;
    let changed = false;
    // Once the first tie run's first list page is answered, every booking changes once at the source.
    sim.events.on("request", (e) => {
      if (changed || e.endpoint !== "list" || /pageSize=1(&|$)/.test(e.url)) return;
      changed = true;
      for (let i = 0; i < count; i++) sim.update(i);
    });
    const report = await h.sync({ concurrency: 4 });
    expect(report.status).toBe("success");
    expect(changed).toBe(true);
    // A value changed once at the source changes once in the history, never back to the older one.
    const twice = await h.query<{ id: string; field: string }>(
      `SELECT booking_id AS id, field FROM booking_changes GROUP BY booking_id, field HAVING count(*) > 1`,
    );
    expect(twice).toEqual([]);
  });

  it("keeps one stream per booking type, each with its own checkpoint", async () => {
    h = await harness({ bookings: 600, tieRun: 3, pageSize: 25 });
    const lc = await h.sync({ bookingType: "LC" });
    expect(lc.stream).toBe("feed:LC");
    expect(await h.mirrorIds()).toEqual(h.sourceIds("LC"));
    const types = await h.query<{ type: string | null }>(
      "SELECT DISTINCT booking_type AS type FROM bookings",
    );
    expect(types.map((r) => r.type)).toEqual(["LC"]);
    expect((await h.mirror.readStream("feed")).checkpoint).toBeNull();
    expect((await h.mirror.readStream("feed:LC")).checkpoint).toBe(lc.checkpointAfter);
  });

  it("a second sync with nothing new makes one feed request and changes nothing", async () => {
    h = await harness({ bookings: 3000 });
    const cold = await h.sync();
    expect(cold.status).toBe("success");
    h.sim.resetStats();
    const again = await h.sync();
    expect(h.sim.stats.byEndpoint.feed).toBe(1);
    expect(again).toMatchObject({ status: "success", inserted: 0, updated: 0, rejected: 0 });
    expect(again.checkpointAfter).toBe(cold.checkpointAfter);
  });

  it("a sync after N new bookings costs about N / page size requests, not a full walk", async () => {
    h = await harness({ bookings: 5000, spacingMs: 1000 });
    await h.sync();
    h.sim.insert(1000);
    h.sim.resetStats();
    const report = await h.sync();
    // 1000 new + the lookback margin (600 s at 1 s spacing), 100 a page: 16 pages, plus one to see the floor.
    expect(h.sim.stats.byEndpoint.feed).toBeGreaterThanOrEqual(10);
    expect(h.sim.stats.byEndpoint.feed).toBeLessThanOrEqual(18);
    expect(report.inserted).toBe(1000);
    expect(await h.mirrorIds()).toEqual(h.sourceIds());
  });

  it("picks up a late arrival created inside the lookback window", async () => {
    const late = 500 - 4; // created 4 minutes before the newest, committed after the first sync
    h = await harness({ bookings: 500, hidden: [late] });
    await h.sync();
    const lateId = h.sim.dataset.summary(late)._id;
    expect(await h.mirrorIds()).not.toContain(lateId);
    h.sim.release([late]);
    const report = await h.sync();
    expect(report.inserted).toBe(1);
    expect(await h.mirrorIds()).toContain(lateId);
    expect(await h.mirrorIds()).toEqual(h.sourceIds());
  });

  it("retries faults (5xx, 429, HTML, cut-off bodies, dropped connections) and ends complete", async () => {
    h = await harness({ bookings: 2000, pageSize: 50, faultRate: 0.3, faultSeed: 5 });
    const report = await h.sync();
    expect(report.status).toBe("success");
    expect(report.retries).toBeGreaterThan(0);
    expect(await h.mirrorIds()).toEqual(h.sourceIds());
  });

  it("stores malformed records that have an _id as bookings with their problems, and quarantines the keyless one", async () => {
    h = await harness({ bookings: 300 });
    h.sim.inject({ kind: "malformed", count: 3 }, { path: "feed" });
    const report = await h.sync({ details: false });
    expect(report.status).toBe("success");
    expect(report.rejected).toBe(1);
    const rejects = (await h.query<{ reason: string }>("SELECT reason FROM rejected_records")).map(
      (r) => r.reason,
    );
    expect(rejects).toEqual([expect.stringMatching(/^_id: /)]);
    const problems = (
      await h.query<{ problems: string }>(
        "SELECT summary_problems AS problems FROM bookings WHERE summary_problems IS NOT NULL ORDER BY 1",
      )
    ).map((r) => r.problems);
    expect(problems).toEqual([expect.stringMatching(/^createdAt /), expect.stringMatching(/^totalAmount: /)]);
    // The keyless one (among the 3 newest) had no id to account for it, so the repair found the
    // shortfall and read it whole from list-bookings.
    expect(report.repair).toMatchObject({ end: "repaired", repaired: 1 });
    expect(await h.mirrorIds()).toEqual(h.sourceIds());
    // A rerun sees the same bad record again and adds no duplicate reject.
    h.sim.inject({ kind: "malformed", count: 3 }, { path: "feed" });
    await h.sync({ details: false });
    expect(await h.query("SELECT count(*) AS n FROM rejected_records")).toEqual([{ n: 1 }]);
  });

  it("caps the checkpoint at the run's start when the server's clock runs ahead", async () => {
    h = await harness({ bookings: 100, epochMs: Date.now() + 3_600_000 });
    const report = await h.sync();
    expect(report.checkpointAfter).not.toBeNull();
    expect(Date.parse(report.checkpointAfter as string)).toBeLessThanOrEqual(Date.parse(report.startedAt));
  });
});

describeBackends("tie runs longer than a feed page", (backend) => {
  const harness = (options: HarnessOptions) => mirrorHarness(backend, options);
  // Bookings `from` to `from + run - 1` share one createdAt; the others are a second apart.
  const tied = (from: number, run: number) => (i: number) =>
    Date.UTC(2026, 0, 1) + (i < from ? i : i < from + run ? from : i - run + 1) * 1000;
  const runAt = (at: (i: number) => number, from: number) => new Date(at(from)).toISOString();
  const runIds = (at: string, bookingType?: "IN" | "LC") =>
    (h as MirrorHarness).sim
      .allSummaries(bookingType ? { bookingType } : {})
      .filter((b) => b.createdAt === at)
      .map((b) => b._id)
      .sort();
  /** The real client, with each list-bookings request going through `list`. */
  const onList =
    (list: (api: PartnerApi, q: ListQuery, s: AbortSignal | undefined) => Promise<ListPage>) =>
    (api: PartnerApi): PartnerApi => ({
      fetchRecent: (q, s) => api.fetchRecent(q, s),
      listBookings: (q, s) => list(api, q, s),
    });
  /** The fields of the warning that a run could not be read whole, if one was logged. */
  const tieWarning = () =>
    (h as MirrorHarness).logger.lines.find((l) => l.level === "warn" && /could not be read/.test(l.msg ?? ""))
      ?.obj;
  /** The ids of `run` the mirror lacks. */
  const notStored = async (run: string[]) => {
    const mirror = new Set(await (h as MirrorHarness).mirrorIds());
    return run.filter((id) => !mirror.has(id));
  };

  it.each(["exclusive", "inclusive"] as const)(
    "are read through list-bookings (%s cursor): the mirror equals the source, and the run notes nothing",
    async (cursor) => {
      const at = tied(100, 250);
      h = await harness({ bookings: 400, createdAtOf: at, cursor });
      const report = await h.sync();
      expect(report.status).toBe("success");
      // An inclusive server serves the run again for the cursor just past it: that page is read
      // by position too, as the run's millisecond and the one before it.
      const run = runAt(at, 100);
      const before = new Date(Date.parse(run) - 1).toISOString();
      expect(report.tiesRead).toEqual(cursor === "exclusive" ? [run] : [run, before, run]);
      expect(report.tieOverflows).toEqual([]);
      expect(await h.mirrorIds()).toEqual(h.sourceIds());
      expect(report.inserted).toBe(400);
      expect(await h.query("SELECT error FROM sync_runs WHERE id = $1", [report.runId])).toEqual([
        { error: null },
      ]);
    },
  );

  it("are found deep in the list by a binary search: list requests grow with the log of its length", async () => {
    const at = tied(100, 250);
    h = await harness({ bookings: 5000, createdAtOf: at });
    const report = await h.sync();
    expect(report.tiesRead).toEqual([runAt(at, 100)]);
    expect(await h.mirrorIds()).toEqual(h.sourceIds());
    // 4,650 bookings are newer than the run: from the top that is 47 pages before it even starts.
    // A search over 5,000 positions takes 13 requests of one booking, then the run's 3 or 4 pages
    // (and the drift check's one).
    expect(h.sim.stats.byEndpoint.list).toBeLessThanOrEqual(20);
  });

  it("a typed stream stores only its own type from the run", async () => {
    const at = tied(100, 250);
    h = await harness({ bookings: 400, createdAtOf: at, pageSize: 50 });
    const report = await h.sync({ bookingType: "LC" });
    expect(report.tiesRead).toEqual([runAt(at, 100)]);
    expect(runIds(runAt(at, 100), "LC").length).toBeGreaterThan(50);
    expect(await h.mirrorIds()).toEqual(h.sourceIds("LC"));
  });

  it("bookings above the run that vanish during the search make the walk start higher, and the run is read whole", async () => {
    const at = tied(100, 250);
    let removed = false;
    h = await harness({
      bookings: 600,
      createdAtOf: at,
      // Right after the search, before the walk's first page: 150 of the 250 bookings above the
      // run go, so the page the search chose now lies inside the run, two pages too low.
      wrapApi: onList((api, q, s) => {
        if (!removed && q.pageSize > 1) {
          removed = true;
          for (let i = 400; i < 550; i++) h?.sim.remove(i);
        }
        return api.listBookings(q, s);
      }),
    });
    const run = runIds(runAt(at, 100));
    const report = await h.sync();
    expect(removed).toBe(true);
    expect(report.tiesRead).toEqual([runAt(at, 100)]);
    const higher = h.logger.lines.filter((l) => /starting a page higher/.test(l.msg ?? ""));
    expect(higher).toHaveLength(2);
    expect(await notStored(run)).toEqual([]);
    expect(await notStored(h.sourceIds())).toEqual([]);
  });

  it("a sync whose list requests keep failing stops before the run, and the next one reads it", async () => {
    const at = tied(100, 250);
    h = await harness({ bookings: 400, createdAtOf: at });
    // After the read of the source's total, six 503s: the tie's first list request and its five retries.
    h.sim.inject(
      [
        { kind: "slow", ms: 0 },
        ...Array.from({ length: 6 }, () => ({ kind: "5xx" as const, status: 503 as const })),
      ],
      { path: "list" },
    );
    const failed = await h.sync();
    expect(failed.status).toBe("failed");
    expect(failed.tiesRead).toEqual([]);
    // The tie page's progress was not committed: the walk resumes on it.
    expect(walkPosition((await h.mirror.readStream("feed")).walk)).toBe(instantOf(runAt(at, 100)));
    const again = await h.sync();
    expect(again.status).toBe("success");
    // Read by the resumed walk, and again by the new walk's lookback, which covers these 400 s.
    expect(again.tiesRead).toContain(runAt(at, 100));
    expect(again.tieOverflows).toEqual([]);
    expect(await h.mirrorIds()).toEqual(h.sourceIds());
  });

  it("a list-bookings refusal no retry can fix reports the run, the walk goes on, and the repair reads it", async () => {
    const at = tied(100, 250);
    h = await harness({ bookings: 400, createdAtOf: at });
    h.sim.inject([{ kind: "slow", ms: 0 }, { kind: "401" }], { path: "list" });
    const report = await h.sync();
    expect(report.status).toBe("success");
    expect(report.tieOverflows).toEqual([runAt(at, 100)]);
    expect(tieWarning()).toMatchObject({ why: expect.stringMatching(/list-bookings failed: .*401/) });
    expect(report.repair?.shortfall).toBe(0);
    expect(await h.mirrorIds()).toEqual(h.sourceIds());
  });

  it("a run that could not be read and no repair vouches for fails the sync; a typed stream stops before it", async () => {
    const at = tied(100, 250);
    h = await harness({ bookings: 400, createdAtOf: at, pageSize: 50 });
    h.sim.inject(
      Array.from({ length: 200 }, () => ({ kind: "401" as const })),
      { path: "list" },
    );
    const untyped = await h.sync();
    expect(untyped.status).toBe("failed");
    expect(untyped.error?.message).toMatch(
      /could not be read whole, and the repair could not show the mirror complete/,
    );
    const typed = await h.sync({ bookingType: "LC" });
    expect(typed.status).toBe("failed");
    expect(typed.error?.message).toMatch(/could not be read .*stopped with the checkpoint unmoved/);
    expect((await h.mirror.readStream("feed:LC")).checkpoint).toBeNull();
    h.sim.clearFaults();
    expect((await h.sync({ bookingType: "LC" })).status).toBe("success");
    const lc = h.sourceIds("LC");
    expect((await h.mirrorIds()).filter((id) => lc.includes(id))).toEqual(lc);
  });

  it("bookings above the run that vanish while its pages are read are stepped back over", async () => {
    const at = tied(100, 250);
    let pages = 0;
    h = await harness({
      bookings: 600,
      createdAtOf: at,
      wrapApi: onList((api, q, s) => {
        if (q.pageSize > 1 && ++pages === 3) for (let i = 500; i < 550; i++) h?.sim.remove(i);
        return api.listBookings(q, s);
      }),
    });
    const run = runIds(runAt(at, 100));
    const report = await h.sync();
    expect(pages).toBeGreaterThan(3);
    expect(report.tiesRead).toEqual([runAt(at, 100)]);
    expect(await notStored(run)).toEqual([]);
  });

  /**
   * The run's pages (not the search's pages of one) numbered in `repeat` come back holding the
   * page before's bookings, as a server sorting only by createdAt may do between two requests.
   */
  const repeating = (...repeat: number[]) => {
    let pages = 0;
    return onList(async (api, q, s) => {
      if (q.pageSize === 1 || !repeat.includes(++pages)) return api.listBookings(q, s);
      return { ...(await api.listBookings({ ...q, page: q.page - 1 }, s)), page: q.page };
    });
  };

  it("a tie page repeated twice is caught and the run reported; the repair reads the rest", async () => {
    const at = tied(100, 250);
    h = await harness({ bookings: 400, createdAtOf: at, wrapApi: repeating(2, 3) });
    const report = await h.sync();
    expect(report.tiesRead).toEqual([]);
    expect(report.tieOverflows).toEqual([runAt(at, 100)]);
    expect(tieWarning()).toMatchObject({ why: expect.stringMatching(/repeats \d+ bookings of page/) });
    expect(report.status).toBe("success");
    expect(await h.mirrorIds()).toEqual(h.sourceIds());
  });

  it("a tie page repeated once is read again, and the run is read whole", async () => {
    const at = tied(100, 250);
    h = await harness({ bookings: 400, createdAtOf: at, wrapApi: repeating(2) });
    const report = await h.sync();
    expect(report.tiesRead).toEqual([runAt(at, 100)]);
    expect(report.tieOverflows).toEqual([]);
    expect(await h.mirrorIds()).toEqual(h.sourceIds());
  });

  it("a booking without a readable createdAt does not throw the search off", async () => {
    const at = tied(100, 250);
    h = await harness({
      bookings: 5000,
      createdAtOf: at,
      // The newest booking's createdAt is unreadable, whenever the search asks for it alone.
      wrapApi: onList(async (api, q, s) => {
        const page = await api.listBookings(q, s);
        if (q.page !== 1 || q.pageSize !== 1) return page;
        const unreadable = (r: ListPage["records"][number]): ListPage["records"][number] => ({
          ok: false,
          id: r.id,
          createdAt: null,
          reason: "createdAt: not an ISO 8601 timestamp",
          raw: {},
        });
        return { ...page, records: page.records.map(unreadable) };
      }),
    });
    const report = await h.sync();
    expect(report.tiesRead).toEqual([runAt(at, 100)]);
    expect(h.sim.stats.byEndpoint.list).toBeLessThanOrEqual(21);
  });

  it("a run longer than the page bound is reported and noted on the run; the repair reads what it left", async () => {
    const at = tied(100, 250);
    h = await harness({ bookings: 400, createdAtOf: at });
    const report = await h.sync({ tieMaxPages: 1 });
    expect(report.status).toBe("success");
    expect(report.tiesRead).toEqual([]);
    expect(report.tieOverflows).toEqual([runAt(at, 100)]);
    expect(tieWarning()).toMatchObject({ why: expect.stringMatching(/page bound/) });
    expect(await h.query("SELECT error FROM sync_runs WHERE id = $1", [report.runId])).toEqual([
      { error: `feed tie overflow at ${runAt(at, 100)}` },
    ]);
    // What the bound left out of the run, the repair found by position after the walk.
    expect(report.repair?.repaired).toBeGreaterThan(0);
    expect(await notStored(h.sourceIds())).toEqual([]);
  });

  // PostgreSQL shows a lost commit plainly: a statement error aborts the open transaction, so the
  // commit before the drift check's write loses every page the walk saved.
  it.runIf(backend.kind === "postgres")(
    "a run whose pages' commit is lost records the checkpoint the store kept, not the one it walked to",
    async () => {
      h = await mirrorHarness(backend, { bookings: 300, batch: { pages: 1_000, ms: 3_600_000 } });
      const mirror = h.mirror;
      const at = new Date().toISOString();
      const losing = new Proxy(mirror, {
        get(target, key) {
          if (key === "recordDrift")
            return async (...args: Parameters<Mirror["recordDrift"]>) => {
              await Promise.resolve(target.unlistedTimes({ runId: 1, startedAt: at, at }, -1)).catch(
                () => [],
              );
              return target.recordDrift(...args);
            };
          const value = Reflect.get(target, key);
          return typeof value === "function" ? value.bind(target) : value;
        },
      });
      const report = await runSync({ ...h.deps(), store: losing }, { pageSize: 100, lookbackSeconds: 600 });
      expect(report.status).toBe("failed");
      expect((await mirror.readStream("feed")).checkpoint).toBeNull();
      expect(report.checkpointAfter).toBeNull();
    },
  );
});
