/**
 * How a fill divides its work (src/sync/fill/slices.ts), as tables and properties: how many slices,
 * which positions to probe, the slices between probed bounds (duplicate, null, out-of-order bounds,
 * bounds at or below the floor), and the pages a details half has left. Seeded (FC_SEED to vary).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { PageRuns } from "../src/sync/fill/progress.js";
import {
  addPage,
  probePositions,
  SLICE_MIN_PAGES,
  sliceCount,
  slicesBetween,
  unreadPages,
} from "../src/sync/fill/slices.js";

const SEED = Number(process.env.FC_SEED ?? 20261127);
const STARTED = "2026-03-01T12:00:00.000Z";
const t = (minute: number) => new Date(Date.UTC(2026, 2, 1, 10, minute)).toISOString();

describe("sliceCount", () => {
  const perSlice = 100 * SLICE_MIN_PAGES;
  it.each([
    ["nothing behind", 0, 100, 8, 1],
    ["less than behind nothing", -50, 100, 8, 1],
    ["one page behind", 100, 100, 8, 1],
    ["just under two slices' worth", 2 * perSlice - 1, 100, 8, 1],
    ["two slices' worth", 2 * perSlice, 100, 8, 2],
    ["five slices' worth", 5 * perSlice + 999, 100, 8, 5],
    ["far behind: two slices per request in flight", 1_000_000, 100, 8, 16],
    ["far behind, one request at a time", 1_000_000, 100, 1, 2],
    ["a concurrency below one counts as one", 1_000_000, 100, 0, 2],
    ["a fractional concurrency is rounded down", 1_000_000, 100, 2.9, 4],
    ["small pages make more slices of the same count", 2_000, 10, 8, 16],
  ])("%s", (_, behind, pageSize, concurrency, expected) => {
    expect(sliceCount(behind, pageSize, concurrency)).toBe(expected);
  });
});

describe("probePositions", () => {
  it.each([
    ["one slice probes nothing", 1000, 1, []],
    ["equal quarters", 100, 4, [25, 50, 75]],
    ["rounded down", 10, 3, [3, 6]],
    ["fewer bookings than slices: no position twice, never the newest", 3, 5, [1, 2]],
    ["nothing to split", 0, 4, []],
    ["one booking", 1, 3, []],
  ])("%s", (_, count, slices, expected) => {
    expect(probePositions(count, slices)).toEqual(expected);
  });

  it("gives strictly increasing positions inside the list, at most slices - 1 of them", () => {
    fc.assert(
      fc.property(fc.nat(1_000_000), fc.integer({ min: 1, max: 64 }), (count, slices) => {
        const positions = probePositions(count, slices);
        expect(positions.length).toBeLessThanOrEqual(slices - 1);
        for (const [i, p] of positions.entries()) {
          expect(p).toBeGreaterThan(i === 0 ? 0 : (positions[i - 1] as number));
          expect(p).toBeLessThan(count);
        }
        // Enough bookings for every slice: every one of them is probed, a share of the count apart.
        if (count >= slices) expect(positions).toHaveLength(slices - 1);
      }),
      { seed: SEED, numRuns: 300 },
    );
  });
});

/** The [floor, ceiling] of each slice, newest first. */
const spans = (bounds: Array<string | null>, floor: string | null) =>
  slicesBetween(bounds, floor, STARTED).map((s) => [s.floor, s.ceiling]);

describe("slicesBetween", () => {
  it.each<[string, Array<string | null>, string | null, Array<[string | null, string | null]>]>([
    ["no bound: one slice down to the floor", [], t(0), [[t(0), null]]],
    ["no bound and no floor: the whole feed", [], null, [[null, null]]],
    [
      "each bound ends one slice and starts the next",
      [t(30), t(20), t(10)],
      null,
      [
        [t(30), null],
        [t(20), t(30)],
        [t(10), t(20)],
        [null, t(10)],
      ],
    ],
    [
      "a duplicate bound adds no slice",
      [t(30), t(30), t(10)],
      null,
      [
        [t(30), null],
        [t(10), t(30)],
        [null, t(10)],
      ],
    ],
    [
      "a null bound (no time could be read) adds no slice",
      [t(30), null, t(10)],
      t(0),
      [
        [t(30), null],
        [t(10), t(30)],
        [t(0), t(10)],
      ],
    ],
    [
      "a bound out of order (a probe the source misdated) still bounds a slice, in its place",
      [t(20), t(40), t(10)],
      null,
      [
        [t(40), null],
        [t(20), t(40)],
        [t(10), t(20)],
        [null, t(10)],
      ],
    ],
    [
      "a bound at the floor adds no slice",
      [t(30), t(10)],
      t(10),
      [
        [t(30), null],
        [t(10), t(30)],
      ],
    ],
    ["bounds below the floor add no slice", [t(5), t(1)], t(10), [[t(10), null]]],
    ["only nulls", [null, null], t(10), [[t(10), null]]],
  ])("%s", (_, bounds, floor, expected) => {
    expect(spans(bounds, floor)).toEqual(expected);
  });

  it("starts every slice fresh at its ceiling, with the fill's start time", () => {
    const slices = slicesBetween([t(30)], null, STARTED);
    expect(slices[1]).toEqual({
      startedAt: STARTED,
      ceiling: t(30),
      floor: null,
      upTo: t(30),
      anchor: null,
      fallback: null,
      top: null,
      pages: 0,
    });
  });

  const instant = fc
    .integer({ min: 0, max: 500 })
    .map((m) => new Date(Date.UTC(2026, 2, 1) + m * 1000).toISOString());
  it("covers [floor, +inf) with slices that share their bounds, newest first and strictly ordered", () => {
    fc.assert(
      fc.property(fc.array(fc.option(instant), { maxLength: 40 }), fc.option(instant), (bounds, floor) => {
        const slices = slicesBetween(bounds, floor, STARTED);
        expect(slices.length).toBeGreaterThanOrEqual(1);
        expect(slices[0]?.ceiling).toBeNull();
        expect(slices.at(-1)?.floor).toBe(floor);
        for (const [i, s] of slices.entries()) {
          expect(s.upTo).toBe(s.ceiling);
          const next = slices[i + 1];
          if (next === undefined) continue;
          // Adjacent slices meet at one bound (read by both), and that bound is a probed one.
          expect(s.floor).toBe(next.ceiling);
          expect(bounds).toContain(s.floor);
          // Strictly ordered: no empty slice, none above the one before, none at or below the floor.
          if (s.ceiling != null) expect((s.floor as string) < s.ceiling).toBe(true);
          if (floor !== null) expect((s.floor as string) > floor).toBe(true);
        }
      }),
      { seed: SEED, numRuns: 500 },
    );
  });

  it("keeps every bound of a well-formed probe: distinct, newest first, all above the floor", () => {
    fc.assert(
      fc.property(fc.uniqueArray(instant, { maxLength: 30 }), fc.option(instant), (raw, floor) => {
        const bounds = raw
          .filter((b) => floor === null || b > floor)
          .sort()
          .reverse();
        expect(slicesBetween(bounds, floor, STARTED)).toHaveLength(bounds.length + 1);
      }),
      { seed: SEED, numRuns: 300 },
    );
  });
});

describe("pages read for details", () => {
  it.each<[string, number[], PageRuns]>([
    ["in order", [1, 2, 3], [[1, 3]]],
    ["out of order, merged once the gap fills", [3, 1, 2], [[1, 3]]],
    [
      "with a gap",
      [1, 2, 5, 6],
      [
        [1, 2],
        [5, 6],
      ],
    ],
    ["twice the same page", [4, 4], [[4, 4]]],
  ])("addPage: %s", (_, pages, expected) => {
    expect(pages.reduce(addPage, [] as PageRuns)).toEqual(expected);
  });

  it("unreadPages leaves out exactly the pages read", () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 60 }), { maxLength: 80 }), fc.nat(70), (read, pages) => {
        const runs = read.reduce(addPage, [] as PageRuns);
        const unread = [...unreadPages(runs, pages)];
        const readSet = new Set(read.filter((p) => p <= pages));
        expect(unread).toEqual(range(1, pages).filter((p) => !readSet.has(p)));
      }),
      { seed: SEED, numRuns: 300 },
    );
  });
});

function range(from: number, to: number): number[] {
  return Array.from({ length: Math.max(0, to - from + 1) }, (_, i) => from + i);
}
