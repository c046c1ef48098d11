/**
 * The mirror repairs itself: a gap found by position (binary search over pages of one) and read,
 * through the real client, the simulator on 127.0.0.1 and a SQLite file.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createApiClient } from "../src/api/client.js";
import { systemClock } from "../src/app.js";
import { zeroCounters } from "../src/sync/counters.js";
import { repairMirror } from "../src/sync/list/repair.js";
import type { PartnerApi } from "../src/sync/ports.js";
import { type Harness, harness } from "./support/harness.js";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** Deletes the mirror's rows at the given positions of the source (0 = newest). */
function lose(positions: number[]): string[] {
  const source = (h as Harness).sim.allSummaries();
  const ids = positions.map((p) => source[p]?._id as string);
  const del = (h as Harness).store.db.prepare("DELETE FROM bookings WHERE id = ?");
  for (const id of ids) del.run(id);
  return ids;
}

describe("repair", () => {
  it("a sync finds lost bookings by position and stores them: the mirror ends equal to the source", async () => {
    h = await harness({ bookings: 3000 });
    expect((await h.sync()).status).toBe("success");
    lose([...Array.from({ length: 450 }, (_, i) => 1200 + i), 2400, 2999]);
    h.sim.resetStats();
    const report = await h.sync();
    expect(report.status).toBe("success");
    expect(h.mirrorIds()).toEqual(h.sourceIds());
    expect(report.repair).toMatchObject({ end: "repaired", repaired: 452, shortfall: 0 });
    // Three gaps, each at most about 2 × log2(3000) = 24 probes (a probe that finds no shortfall
    // also asks whether the next booking shares its millisecond) plus the gap's pages.
    expect(h.sim.stats.byEndpoint.list).toBeLessThan(3 * 24 + 450 / 100 + 4);
    const row = h.store.db
      .prepare("SELECT gaps_found AS gaps, bookings_repaired AS repaired FROM sync_runs WHERE id = ?")
      .get(report.runId);
    expect(row).toEqual({ gaps: report.repair?.gaps, repaired: 452 });
  });

  it("finds a gap in a mirror of 100,000 bookings in under 40 requests", async () => {
    h = await harness({ bookings: 100_000 });
    const source = h.sim.allSummaries();
    const insert = h.store.db.prepare(
      "INSERT INTO bookings (id, created_at, first_seen_at, summary_synced_at, total_amount, paid, booking_state, order_state) VALUES (?, ?, ?, ?, 0, 0, 0, 0)",
    );
    h.store.db.transaction(() => {
      for (const b of source) insert.run(b._id, b.createdAt, b.createdAt, b.createdAt);
    })();
    const lost = lose([61_803]);
    h.sim.resetStats();
    const counters = zeroCounters();
    const report = await repairMirror(depsOf(h, apiOf(h)), { pageSize: 100 }, counters);
    expect(report).toMatchObject({ end: "repaired", gaps: 1, repaired: 1, shortfall: 0 });
    expect(h.store.absentIds(lost)).toEqual([]);
    expect(h.sim.stats.byEndpoint.list).toBeLessThan(40);
    expect(counters.requests).toBe(h.sim.stats.byEndpoint.list);
  });

  // Runs of twelve bookings a millisecond, which the mirror counts at once: the search judges a run
  // by its last position, so it neither stops in a run the mirror holds whole nor crawls past them.
  it.each([
    {
      name: "a gap from inside a run to the end, pages of 20",
      bookings: 240,
      pageSize: 20,
      lost: range(20, 240),
    },
    { name: "the same, pages of 100", bookings: 240, pageSize: 100, lost: range(20, 240) },
    { name: "one booking below hundreds of whole runs", bookings: 6000, pageSize: 20, lost: [4005] },
    { name: "two gaps", bookings: 2400, pageSize: 20, lost: [500, 501, 1700] },
    {
      name: "a gap above a whole run and one below it",
      bookings: 240,
      pageSize: 20,
      lost: [30, ...range(100, 111)],
    },
    {
      name: "three of one run, two bookings above deleted at the source",
      bookings: 2400,
      pageSize: 20,
      lost: [1801, 1802, 1803],
      removed: [30, 31],
    },
  ])("runs of one time: $name", async ({ bookings, pageSize, lost: positions, removed = [] }) => {
    h = await harness({ bookings, tieRun: 12 });
    mirrorAll(h);
    const lost = lose(positions);
    // Kept by the mirror, gone from the source (the simulator numbers its bookings oldest first).
    for (const p of removed) h.sim.remove(bookings - 1 - p);
    h.sim.resetStats();
    const report = await repairMirror(depsOf(h, apiOf(h)), { pageSize }, zeroCounters());
    expect(report).toMatchObject({ end: "repaired", repaired: lost.length });
    expect(h.store.absentIds(lost)).toEqual([]);
    expect(h.sim.stats.byEndpoint.list).toBeLessThan(120);
  });

  it("is not fooled by bookings the source deleted: it still finds the one the mirror lacks", async () => {
    h = await harness({ bookings: 2000 });
    expect((await h.sync()).status).toBe("success");
    // The source deletes two bookings the mirror keeps; the mirror loses three others below them.
    h.sim.remove(100);
    h.sim.remove(101);
    lose([1500, 1501, 1502]);
    const report = await h.sync();
    expect(report.status).toBe("success");
    const mirror = new Set(h.mirrorIds());
    expect(h.sourceIds().filter((id) => !mirror.has(id))).toEqual([]);
  });

  it("a booking the source keeps serving malformed costs a bounded search, not a scan of the list", async () => {
    h = await harness({ bookings: 2000 });
    expect((await h.sync()).status).toBe("success");
    const [lost] = lose([1234]);
    const api = apiOf(h);
    // The source serves that booking malformed wherever it is read: it can only be quarantined.
    const malformed = {
      ...api,
      listBookings: async (...args: Parameters<typeof api.listBookings>) => {
        const page = await api.listBookings(...args);
        const records = page.records.map((r) =>
          r.id === lost
            ? {
                ok: false as const,
                id: r.id,
                createdAt: null,
                reason: "totalAmount: expected number",
                raw: {},
              }
            : r,
        );
        return { ...page, records };
      },
    };
    const counters = zeroCounters();
    const report = await repairMirror(depsOf(h, malformed), { pageSize: 100 }, counters);
    expect(report).toMatchObject({ end: "unplaced", shortfall: 1 });
    // At most three places searched, each at most about 2 × log2(2000) = 22 probes and a page.
    expect(counters.requests).toBeLessThan(3 * (22 + 2) + 2);
  });

  it("a shortfall no page explains is reported, and the run does not loop", async () => {
    h = await harness({ bookings: 500 });
    expect((await h.sync()).status).toBe("success");
    // A total that counts ten bookings the pages never serve.
    const api = apiOf(h);
    const lying = {
      ...api,
      listBookings: async (...args: Parameters<typeof api.listBookings>) => {
        const page = await api.listBookings(...args);
        return { ...page, total: page.total + 10 };
      },
    };
    const report = await repairMirror(depsOf(h, lying), { pageSize: 100 }, zeroCounters());
    expect(report.end).toBe("unplaced");
    expect(report.shortfall).toBe(10);
  });
});

/** Positions `from` to `to` (not included). */
function range(from: number, to: number): number[] {
  return Array.from({ length: to - from }, (_, i) => from + i);
}

/** Stores every booking the simulator serves, as rows of a mirror that was once complete. */
function mirrorAll(x: Harness) {
  const insert = x.store.db.prepare(
    "INSERT INTO bookings (id, created_at, first_seen_at, summary_synced_at, total_amount, paid, booking_state, order_state) VALUES (?, ?, ?, ?, 0, 0, 0, 0)",
  );
  x.store.db.transaction(() => {
    for (const b of x.sim.allSummaries()) insert.run(b._id, b.createdAt, b.createdAt, b.createdAt);
  })();
}

/** The repair's world: the harness's store and logger, with `api` as the source. */
function depsOf(x: Harness, api: PartnerApi) {
  return { api, store: x.store, clock: systemClock, logger: x.logger, signal: new AbortController().signal };
}

function apiOf(x: Harness) {
  return createApiClient({ baseUrl: x.sim.url, token: "sim-token", minBackoffMs: 1, maxBackoffMs: 20 });
}
