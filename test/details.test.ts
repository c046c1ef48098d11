/**
 * `sync --details` and the drift check end to end: the bundled simulator over real HTTP, the real
 * client and a real SQLite file; the CLI as a subprocess for the user's view.
 */
import { afterEach, describe, expect, it } from "vitest";
import { runReconcile } from "../src/sync/list/reconcile.js";
import { type Harness, harness, runCli } from "./support/harness.js";
import { expectMirrorHoldsSourceInFull, listDeps, pageOf } from "./support/list-deps.js";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const withoutDetails = (x: Harness) =>
  (x.store.db.prepare("SELECT count(*) AS n FROM bookings WHERE detail_json IS NULL").get() as { n: number })
    .n;

/** Pages of list-bookings the details pass asked for (the drift check's pageSize=1 request left out). */
function detailPages(sim: Harness["sim"]): number[] {
  const pages: number[] = [];
  sim.events.on("request", (e) => {
    if (e.endpoint === "list" && !e.url.includes("pageSize=1&") && !e.url.endsWith("pageSize=1")) {
      pages.push(pageOf(e.url));
    }
  });
  return pages;
}

describe("sync --details", () => {
  it("bookings whose summary the feed writes after their details leave the details queue once confirmed", async () => {
    h = await harness({ bookings: 300 });
    // A reconcile of an empty mirror stores every booking from list-bookings, details first.
    expect((await runReconcile(listDeps(h), { since: null })).status).toBe("success");
    // The feed's first sight of such a booking writes its summary after its details.
    await h.sync({ lookbackSeconds: 3600 });
    expect(h.store.bookingsNeedingDetails(1000, new Date().toISOString()).length).toBeGreaterThan(0);
    await h.sync({ details: true, detailsMaxPages: 10 });
    expect(h.store.bookingsNeedingDetails(1000, new Date().toISOString())).toEqual([]);
    const pages = detailPages(h.sim);
    await h.sync({ details: true, detailsMaxPages: 10 });
    expect(pages).toEqual([]);
  });

  it("leaves no booking without details (CLI)", async () => {
    h = await harness({ bookings: 1200 });
    const run = await runCli(
      ["sync", "--details", "--details-max-pages", "100"],
      h.env({ LOG_LEVEL: "warn" }),
    );
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain("details: 1200 of 1200 found, 1200 stored in 12 pages");
    expect(run.stdout).toContain("source 1200 / mirror 1200");
    expect(withoutDetails(h)).toBe(0);
    expectMirrorHoldsSourceInFull(h);
  });

  it("spreads a large gap over runs, each continuing where the last stopped", async () => {
    h = await harness({ bookings: 1500 });
    expect((await h.sync()).status).toBe("success");
    const pages = detailPages(h.sim);
    const ends: string[] = [];
    for (let run = 0; run < 4; run++) {
      const report = await h.sync({ details: true, detailsMaxPages: 4 });
      expect(report.status).toBe("success");
      ends.push(report.details?.end ?? "none");
    }
    expect(ends).toEqual(["limit", "limit", "limit", "done"]);
    expect(pages).toEqual(Array.from({ length: 15 }, (_, i) => i + 1));
    expect(h.store.bookingsNeedingDetails(10, new Date().toISOString())).toEqual([]);
    expect(h.store.readProgress("details").progress).toBeNull();
    expectMirrorHoldsSourceInFull(h);
  });

  it("skips nothing when bookings arrive between runs that continue a walk", async () => {
    h = await harness({ bookings: 1500 });
    await h.sync();
    const pages = detailPages(h.sim);
    await h.sync({ details: true, detailsMaxPages: 4 });
    h.sim.insert(250); // pushes every unread booking 2.5 pages down
    for (let run = 0; run < 12; run++) {
      const report = await h.sync({ details: true, detailsMaxPages: 4 });
      expect(report.status).toBe("success");
      if (report.details?.end === "idle") break;
    }
    expect(withoutDetails(h)).toBe(0);
    expect(h.mirrorIds()).toEqual(h.sourceIds());
    // 18 pages down to the oldest (now 2.5 pages lower), then 3 from the top for the arrivals.
    expect(pages.length).toBeLessThanOrEqual(24);
  });

  it("reads one page for a few new bookings, and refreshes details when a summary changed", async () => {
    h = await harness({ bookings: 900 });
    await h.sync({ details: true, detailsMaxPages: 100 });
    // Booking 897 is inside the feed's lookback, so the next walk sees its summary change.
    h.sim.update(897);
    h.sim.insert(30);
    const report = await h.sync({ details: true });
    // Filling in a row the feed created counts as an update of that row.
    expect(report.details).toMatchObject({
      wanted: 31,
      found: 31,
      updated: 31,
      inserted: 0,
      pages: 1,
      end: "done",
    });
    expect(withoutDetails(h)).toBe(0);
    expectMirrorHoldsSourceInFull(h);
  });

  it("fails the sync when the details pass fails, keeping what the feed walk stored", async () => {
    h = await harness({ bookings: 300 });
    // The first list request reads the source's total before the walk; the details pass's fails.
    h.sim.inject([{ kind: "slow", ms: 0 }, { kind: "401" }], { path: "list" });
    const report = await h.sync({ details: true });
    expect(report.status).toBe("failed");
    expect(report.error?.message).toMatch(/^details: list-bookings: HTTP 401/);
    expect(h.mirrorIds()).toEqual(h.sourceIds());
    expect(h.store.lastRun("sync")).toMatchObject({ status: "failed" });
  });
});

describe("drift check", () => {
  it("records the source's total and the mirror's count on the sync run", async () => {
    h = await harness({ bookings: 700 });
    const report = await h.sync();
    expect(report.drift).toMatchObject({ sourceTotal: 700, localTotal: 700 });
    expect(h.store.lastRun("sync")).toMatchObject({ sourceTotal: 700, localTotal: 700 });
    h.sim.insert(5);
    h.sim.remove(10);
    const next = await h.sync();
    expect(next.drift).toMatchObject({ sourceTotal: 704, localTotal: 705 });
    expect(h.store.lastRun("sync")).toMatchObject({ sourceTotal: 704, localTotal: 705 });
  });

  it("never fails the sync, and is skipped for a booking-type stream", async () => {
    h = await harness({ bookings: 200 });
    // The read of the source's total before the walk fails after its retries: the walk goes one page
    // at a time and the drift check, which would fail the same way, is skipped.
    h.sim.inject(
      Array.from({ length: 6 }, () => ({ kind: "5xx" as const, status: 503 as const })),
      { path: "list" },
    );
    const report = await h.sync();
    expect(report.status).toBe("success");
    expect(report.drift).toBeUndefined();
    expect(h.logger.lines.some((l) => l.level === "warn" && l.msg?.startsWith("drift check failed"))).toBe(
      true,
    );
    // A typed stream's first sync reads the source's total to plan its fill; a later one, up to date,
    // reads no list page at all.
    await h.sync({ bookingType: "IN" });
    h.sim.resetStats();
    const typed = await h.sync({ bookingType: "IN" });
    expect(typed.drift).toBeUndefined();
    expect(h.sim.stats.byEndpoint.list).toBe(0);
  });
});
