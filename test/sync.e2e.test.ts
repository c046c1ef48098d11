/**
 * The incremental sync end to end: the bundled simulator over real HTTP, the real API client and
 * a real SQLite file. Each test says which invariant of DESIGN-NOTES it proves.
 */
import { afterEach, describe, expect, it } from "vitest";
import { type Harness, harness } from "./support/harness.js";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe("sync against the simulator", () => {
  it.each(["exclusive", "inclusive"] as const)(
    "mirrors every booking with a %s cursor and heavy ties across page boundaries",
    async (cursor) => {
      h = await harness({ bookings: 1500, tieRun: 7, cursor, pageSize: 10 });
      const report = await h.sync();
      expect(report.status).toBe("success");
      expect(report.tieOverflows).toEqual([]);
      expect(h.mirrorIds()).toEqual(h.sourceIds());
      expect(report.inserted).toBe(1500);
    },
  );

  it("keeps one stream per booking type, each with its own checkpoint", async () => {
    h = await harness({ bookings: 600, tieRun: 3, pageSize: 25 });
    const lc = await h.sync({ bookingType: "LC" });
    expect(lc.stream).toBe("feed:LC");
    expect(h.mirrorIds()).toEqual(h.sourceIds("LC"));
    const types = h.store.db.prepare("SELECT DISTINCT booking_type FROM bookings").pluck().all();
    expect(types).toEqual(["LC"]);
    expect(h.store.readStream("feed").checkpoint).toBeNull();
    expect(h.store.readStream("feed:LC").checkpoint).toBe(lc.checkpointAfter);
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
    expect(h.mirrorIds()).toEqual(h.sourceIds());
  });

  it("picks up a late arrival created inside the lookback window", async () => {
    const late = 500 - 4; // created 4 minutes before the newest, committed after the first sync
    h = await harness({ bookings: 500, hidden: [late] });
    await h.sync();
    const lateId = h.sim.dataset.summary(late)._id;
    expect(h.mirrorIds()).not.toContain(lateId);
    h.sim.release([late]);
    const report = await h.sync();
    expect(report.inserted).toBe(1);
    expect(h.mirrorIds()).toContain(lateId);
    expect(h.mirrorIds()).toEqual(h.sourceIds());
  });

  it("retries faults (5xx, 429, HTML, cut-off bodies, dropped connections) and ends complete", async () => {
    h = await harness({ bookings: 2000, pageSize: 50, faultRate: 0.3, faultSeed: 5 });
    const report = await h.sync();
    expect(report.status).toBe("success");
    expect(report.retries).toBeGreaterThan(0);
    expect(h.mirrorIds()).toEqual(h.sourceIds());
  });

  it("quarantines malformed records with their reason and stores the rest", async () => {
    h = await harness({ bookings: 300 });
    h.sim.inject({ kind: "malformed", count: 3 });
    const report = await h.sync();
    expect(report.status).toBe("success");
    expect(report.rejected).toBe(3);
    const rejects = h.store.db.prepare("SELECT reason FROM rejected_records").pluck().all() as string[];
    expect(rejects).toHaveLength(3);
    expect(rejects.join("\n")).toMatch(/_id/);
    expect(rejects.join("\n")).toMatch(/totalAmount/);
    expect(rejects.join("\n")).toMatch(/createdAt/);
    // Every valid record is stored; the malformed ones (the 3 newest) are not.
    expect(h.mirrorIds()).toHaveLength(297);
    // A rerun sees the same bad records again and adds no duplicate rejects.
    h.sim.inject({ kind: "malformed", count: 3 });
    await h.sync();
    expect(h.store.db.prepare("SELECT count(*) FROM rejected_records").pluck().get()).toBe(3);
  });

  it("a full page of one timestamp is logged and counted, and the walk ends", async () => {
    const n = 400;
    // Bookings 100..349 share one createdAt: 250 of them, more than a page of 100.
    const at = (i: number) => Date.UTC(2026, 0, 1) + (i < 100 ? i : i < 350 ? 100 : i - 249) * 1000;
    h = await harness({ bookings: n, createdAtOf: at });
    const report = await h.sync();
    expect(report.status).toBe("success");
    expect(report.tieOverflows).toEqual([new Date(at(100)).toISOString()]);
    expect(h.logger.lines.some((l) => l.level === "warn" && /shares one createdAt/.test(l.msg ?? ""))).toBe(
      true,
    );
    const missing = h.sourceIds().filter((id) => !new Set(h?.mirrorIds()).has(id));
    const tied = new Set(
      h.sim
        .allSummaries()
        .filter((b) => b.createdAt === report.tieOverflows[0])
        .map((b) => b._id),
    );
    for (const id of missing) expect(tied.has(id)).toBe(true);
  });

  it("caps the checkpoint at the run's start when the server's clock runs ahead", async () => {
    h = await harness({ bookings: 100, epochMs: Date.now() + 3_600_000 });
    const report = await h.sync();
    expect(report.checkpointAfter).not.toBeNull();
    expect(Date.parse(report.checkpointAfter as string)).toBeLessThanOrEqual(Date.parse(report.startedAt));
  });
});
