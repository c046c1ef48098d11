/**
 * The list's verdict on a feed that stopped serving but claims more (list/feed-end.ts): the real
 * client against the bundled simulator, which serves both booking types newest first, or a crafted
 * source whose records carry impossible times, and a real SQLite mirror.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createApiClient } from "../src/api/client.js";
import { systemClock } from "../src/app.js";
import { openStore } from "../src/store/index.js";
import { runBackfill } from "../src/sync/backfill/backfill.js";
import { zeroCounters } from "../src/sync/counters.js";
import { justBefore } from "../src/sync/feed/window.js";
import { confirmFeedEnd } from "../src/sync/list/feed-end.js";
import { type CraftedSource, startCraftedSource } from "./support/crafted-source.js";
import { memoryLogger } from "./support/fakes.js";
import { type Harness, harness } from "./support/harness.js";
import { formatTime } from "./support/hostile-data.js";
import { listDeps } from "./support/list-deps.js";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** An instant just below the millisecond of `createdAt`: where a walk stands once it has read it. */
const below = (createdAt: string) => justBefore(new Date(createdAt).toISOString());

describe("confirmFeedEnd", () => {
  it("vouches for an end below the oldest booking, and names a booking the walk still owes otherwise", async () => {
    h = await harness({ bookings: 300 });
    const all = h.sim.allFull();
    const deps = listDeps(h);
    const counters = zeroCounters();
    const oldest = all.at(-1)?.createdAt as string;
    const end = await confirmFeedEnd(deps, below(oldest), { pageSize: 50 }, counters);
    expect(end.complete).toBe(true);
    const middle = all[150]?.createdAt as string;
    const shortCounters = zeroCounters();
    const short = await confirmFeedEnd(deps, below(middle), { pageSize: 50 }, shortCounters);
    expect(short).toMatchObject({ complete: false, why: expect.stringContaining(all[151]?._id as string) });
    // A binary search over 300 positions and a page, not a scan of the list.
    expect(counters.requests).toBeLessThanOrEqual(12);
    expect(shortCounters.requests).toBeLessThanOrEqual(12);
  });

  it("a typed stream owes only its own type: older bookings of the other type are no debt", async () => {
    h = await harness({ bookings: 300 });
    const all = h.sim.allFull();
    const oldestIn = all.findLast((b) => b.type === "IN");
    const olderLc = all.slice(all.indexOf(oldestIn as (typeof all)[number]) + 1);
    expect(olderLc.length, "the data set has LC bookings older than every IN").toBeGreaterThan(0);
    const deps = listDeps(h);
    const at = below(oldestIn?.createdAt as string);
    const typed = await confirmFeedEnd(deps, at, { pageSize: 50, bookingType: "IN" }, zeroCounters());
    expect(typed.complete).toBe(true);
    const untyped = await confirmFeedEnd(deps, at, { pageSize: 50 }, zeroCounters());
    expect(untyped.complete).toBe(false);
  });

  it("an empty list vouches only for a walk that passed nothing; a list that holds bookings does not vouch for an empty feed", async () => {
    h = await harness({ bookings: 0 });
    expect((await confirmFeedEnd(listDeps(h), null, { pageSize: 50 }, zeroCounters())).complete).toBe(true);
    // A walk standing below bookings the feed served, and a list that holds none: the two disagree.
    const passed = await confirmFeedEnd(
      listDeps(h),
      below("2026-01-05T10:00:00.000Z"),
      { pageSize: 50 },
      zeroCounters(),
    );
    expect(passed).toMatchObject({
      complete: false,
      why: expect.stringMatching(/no booking at all.*disagree/),
    });
    const typed = { pageSize: 50, bookingType: "IN" as const };
    const typedPassed = await confirmFeedEnd(
      listDeps(h),
      below("2026-01-05T10:00:00.000Z"),
      typed,
      zeroCounters(),
    );
    expect(typedPassed.complete).toBe(false);
    await h.close();
    h = await harness({ bookings: 5 });
    expect((await confirmFeedEnd(listDeps(h), null, { pageSize: 50 }, zeroCounters())).complete).toBe(false);
  });

  it("owes only what the mirror lacks: bookings it already holds below the position are no debt", async () => {
    h = await harness({ bookings: 300 });
    const all = h.sim.allFull();
    const deps = listDeps(h);
    expect((await h.sync({ pageSize: 100 })).status).toBe("success");
    const middle = all[150]?.createdAt as string;
    const held = await confirmFeedEnd(deps, below(middle), { pageSize: 50 }, zeroCounters());
    expect(held).toMatchObject({ complete: true, why: expect.stringContaining("the mirror lacks") });
    // One older booking gone from the mirror: that one is the debt, and named.
    const lost = all[240]?._id as string;
    h.store.db.prepare("DELETE FROM bookings WHERE id = ?").run(lost);
    const short = await confirmFeedEnd(deps, below(middle), { pageSize: 50 }, zeroCounters());
    expect(short).toMatchObject({ complete: false, why: expect.stringContaining(lost) });
  });
});

describe("confirmFeedEnd on bookings kept without a valid createdAt", () => {
  let source: CraftedSource | undefined;
  let dir: string | undefined;
  afterEach(async () => {
    await source?.close();
    source = undefined;
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  it("a booking stored with created_at NULL is no debt once held, run after run; one not held is", async () => {
    // Every tenth booking, and the oldest, say 2026-02-30: the list serves them where they stand, and
    // the mirror keeps them with created_at NULL. The oldest lies below any position a walk can reach.
    source = await startCraftedSource({
      count: 120,
      seed: 5,
      craft(b, k) {
        if (k % 10 === 3 || k === 119) {
          Object.assign(b.summary, { createdAt: "2026-02-30T10:00:00.000Z" });
          Object.assign(b.full, { createdAt: "2026-02-30T10:00:00.000Z" });
        }
      },
    });
    dir = mkdtempSync(join(tmpdir(), "booking-sync-feed-end-"));
    const store = openStore(join(dir, "mirror.db"));
    try {
      const api = createApiClient({
        baseUrl: source.url,
        token: source.token,
        minBackoffMs: 1,
        maxBackoffMs: 20,
        logger: memoryLogger(),
      });
      const deps = {
        api,
        store,
        clock: systemClock,
        logger: memoryLogger(),
        signal: new AbortController().signal,
      };
      const nulls = source.bookings.filter((_, k) => k % 10 === 3 || k === 119).map((b) => b.id);
      const oldestTimed = source.bookings[118] as (typeof source.bookings)[number];
      const at = below(formatTime(oldestTimed.trueUs, "ms"));
      // Nothing held yet: a booking without a readable time may lie below the position, so it is owed.
      const cold = await confirmFeedEnd(deps, at, { pageSize: 25 }, zeroCounters());
      expect(cold.complete).toBe(false);
      expect((await runBackfill(deps, { pageSize: 25 })).status).toBe("success");
      const nullRows = store.db
        .prepare("SELECT id FROM bookings WHERE created_at IS NULL ORDER BY id")
        .pluck()
        .all();
      expect(nullRows).toEqual([...nulls].sort());
      for (const run of ["first", "again"]) {
        const end = await confirmFeedEnd(deps, at, { pageSize: 25 }, zeroCounters());
        expect(end, run).toMatchObject({ complete: true });
      }
    } finally {
      store.close();
    }
  });
});
