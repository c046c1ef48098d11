/**
 * Reconcile end to end: the bundled simulator over real HTTP, the real client and a real SQLite
 * file; the CLI as a subprocess for exit codes and the summary line.
 */
import { afterEach, describe, expect, it } from "vitest";
import { parseSince } from "../src/cli/reconcile.js";
import { ConfigError } from "../src/errors.js";
import { runBackfill } from "../src/sync/backfill/backfill.js";
import { runReconcile } from "../src/sync/list/reconcile.js";
import { type Harness, harness, runCli } from "./support/harness.js";
import { listDeps, mirrorDigest } from "./support/list-deps.js";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** Ids of the bookings marked missing. */
const missingIds = (x: Harness) =>
  x.store.db
    .prepare("SELECT id FROM bookings WHERE missing_since IS NOT NULL ORDER BY id")
    .pluck()
    .all() as string[];

const idOf = (x: Harness, i: number) => x.sim.dataset.full(i)._id;

async function mirrored(options: Parameters<typeof harness>[0]): Promise<Harness> {
  const x = await harness(options);
  expect((await runBackfill(listDeps(x), { concurrency: 4 })).status).toBe("success");
  return x;
}

describe("reconcile", () => {
  it("updates changed bookings, marks the ones the source stopped serving, and clears the mark on return", async () => {
    h = await mirrored({ bookings: 1000 });
    h.sim.update(100);
    h.sim.update(200);
    h.sim.remove(300);
    h.sim.dataset.hide([400]);
    const first = await runReconcile(listDeps(h), { since: null });
    expect(first).toMatchObject({ status: "success", inserted: 0, updated: 2, unchanged: 996, missing: 2 });
    expect(missingIds(h)).toEqual([idOf(h, 300), idOf(h, 400)].sort());
    expect(h.mirrorIds()).toHaveLength(1000);
    for (const i of [100, 200]) {
      const row = h.store.db
        .prepare("SELECT detail_json, paid, booking_state FROM bookings WHERE id = ?")
        .get(idOf(h, i)) as {
        detail_json: string;
        paid: number;
        booking_state: number;
      };
      const full = h.sim.dataset.full(i);
      expect(JSON.parse(row.detail_json)).toEqual(JSON.parse(JSON.stringify(full)));
      expect([row.paid, row.booking_state]).toEqual([full.paid ? 1 : 0, full.bookingState]);
    }
    h.sim.release([400]);
    const second = await runReconcile(listDeps(h), { since: null });
    expect(second).toMatchObject({ status: "success", updated: 0, missing: 0 });
    expect(missingIds(h)).toEqual([idOf(h, 300)]);
    expect(h.store.countBookings({ excludeMissing: true })).toBe(999);
    expect(h.store.lastRun("reconcile")).toMatchObject({ status: "success", kind: "reconcile" });
  });

  it("run twice, changes nothing the second time", async () => {
    h = await mirrored({ bookings: 600 });
    h.sim.remove(50);
    await runReconcile(listDeps(h), { since: null });
    // listed_by_run is the pass's own bookkeeping (which run saw a booking), not mirrored data.
    const before = mirrorDigest(h, ["listed_by_run"]);
    const again = await runReconcile(listDeps(h), { since: null });
    expect(again).toMatchObject({ status: "success", inserted: 0, updated: 0, missing: 0 });
    expect(mirrorDigest(h, ["listed_by_run"])).toBe(before);
  });

  it("with --since, re-reads only the window's pages and judges only the window's bookings", async () => {
    h = await mirrored({ bookings: 1000 });
    const since = new Date(h.sim.dataset.createdAtMs(800)).toISOString();
    h.sim.remove(900);
    h.sim.remove(100);
    h.sim.resetStats();
    const report = await runReconcile(listDeps(h), { since });
    expect(report).toMatchObject({ status: "success", missing: 1 });
    expect(missingIds(h)).toEqual([idOf(h, 900)]);
    // Bookings 999..800 less the removed one, then 799: two pages, the second reaching below the
    // window; then the one unlisted booking is looked up again by position before it is marked
    // (about log2(1000) pages of one, and the page holding its time).
    expect(h.sim.stats.byEndpoint.list).toBeGreaterThan(2);
    expect(h.sim.stats.byEndpoint.list).toBeLessThanOrEqual(2 + 12 + 2);
  });

  it("marks nothing when the walk did not complete", async () => {
    h = await mirrored({ bookings: 800 });
    h.sim.remove(20);
    let lists = 0;
    h.sim.events.on("request", (e) => {
      if (e.endpoint === "list" && ++lists === 3) h?.sim.inject({ kind: "401" }, { path: "list" });
    });
    const report = await runReconcile(listDeps(h), { since: null });
    expect(report.status).toBe("failed");
    expect(report.missing).toBe(0);
    expect(missingIds(h)).toEqual([]);
  });

  it("does not mistake bookings that slid up past it for missing ones when the source shrinks mid-walk", async () => {
    h = await mirrored({ bookings: 1000 });
    let lists = 0;
    const newest = [995, 996, 997, 998, 999];
    h.sim.events.on("request", (e) => {
      // Page 3 was just served; page 4 is not asked for yet. The five newest (read on page 1) go.
      if (e.endpoint === "list" && ++lists === 3) for (const i of newest) h?.sim.remove(i);
    });
    const first = await runReconcile(listDeps(h), { since: null });
    expect(first).toMatchObject({ status: "success", missing: 0 });
    expect(missingIds(h)).toEqual([]);
    const second = await runReconcile(listDeps(h), { since: null });
    expect(second.missing).toBe(5);
    expect(missingIds(h)).toEqual(newest.map((i) => idOf(h as Harness, i)).sort());
  });
});

describe("reconcile CLI", () => {
  it("reconciles a window and prints one summary line; a bad --since is a usage error", async () => {
    h = await mirrored({ bookings: 300 });
    const ok = await runCli(["reconcile", "--since", "2h"], h.env({ LOG_LEVEL: "warn" }));
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toMatch(/^reconcile since \S+Z: 0 new, 0 updated, \d+ unchanged, 0 newly missing/);
    const bad = await runCli(["reconcile", "--since", "last week"], h.env());
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--since = "last week" is not valid');
  });

  it("parses durations back from now and ISO times", () => {
    const now = new Date("2025-03-10T12:00:00.000Z");
    expect(parseSince("7d", now)).toBe("2025-03-03T12:00:00.000Z");
    expect(parseSince("24h", now)).toBe("2025-03-09T12:00:00.000Z");
    expect(parseSince("90m", now)).toBe("2025-03-10T10:30:00.000Z");
    expect(parseSince("2025-03-01T00:00:00+01:00", now)).toBe("2025-02-28T23:00:00.000Z");
    expect(() => parseSince("7 weeks", now)).toThrow(ConfigError);
  });

  it("with --since, a record dated far older than its place does not end the pass early", async () => {
    h = await mirrored({ bookings: 1000 });
    const since = new Date(h.sim.dataset.createdAtMs(700)).toISOString();
    const deps = listDeps(h);
    const { api } = deps;
    // The third record of every first page is served dated 2020, mid-page.
    const misdating = {
      ...api,
      listBookings: async (...args: Parameters<typeof api.listBookings>) => {
        const page = await api.listBookings(...args);
        if (args[0].page !== 1 || page.records.length < 3) return page;
        const records = page.records.map((r, i) =>
          i === 2 ? { ...r, createdAt: "2020-01-01T00:00:00.000Z" } : r,
        );
        return { ...page, records };
      },
    };
    const report = await runReconcile({ ...deps, api: misdating }, { since });
    expect(report).toMatchObject({ status: "success", missing: 0 });
    expect(missingIds(h)).toEqual([]);
  });
});
