/**
 * The pure arithmetic behind the list-bookings passes: which start positions a backfill's reads
 * covered while bookings arrived (coverage.ts), and how a sequential walk steps back when the
 * source shrinks (list-position.ts). Tables for the edges, a property for the whole loop.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  addRead,
  countPages,
  type PageRun,
  pagesFor,
  pagesRead,
  type Span,
  uncovered,
} from "../src/sync/backfill/coverage.js";
import { applyRead, atEnd, type ListPosition, pageFor, START } from "../src/sync/list/list-position.js";

describe("addRead", () => {
  it("merges consecutive pages read at one total, in any order", () => {
    let runs: PageRun[] = [];
    for (const p of [1, 3, 2, 5, 4]) runs = addRead(runs, p, 1000);
    expect(runs).toEqual([[1, 5, 1000]]);
  });
  it("keeps pages read at different totals apart, and a repeat adds nothing", () => {
    let runs: PageRun[] = [];
    for (const [p, t] of [
      [1, 1000],
      [2, 1000],
      [3, 1003],
      [2, 1000],
    ] as const)
      runs = addRead(runs, p, t);
    expect(runs).toEqual([
      [1, 2, 1000],
      [3, 3, 1003],
    ]);
    expect(pagesRead(runs)).toBe(3);
  });
});

describe("uncovered", () => {
  const S = 10;
  const cases: Array<{ name: string; runs: PageRun[]; base: number; gaps: Span[] }> = [
    { name: "nothing read", runs: [], base: 25, gaps: [[0, 25]] },
    { name: "every page at T0", runs: [[1, 3, 25]], base: 25, gaps: [] },
    {
      name: "a missing middle page",
      runs: [
        [1, 1, 25],
        [3, 3, 25],
      ],
      base: 25,
      gaps: [[10, 20]],
    },
    // Page 2 read after 4 arrivals held start positions 6..15: 16..19 slid to page 3's old place.
    {
      name: "arrivals before page 3",
      runs: [
        [1, 2, 25],
        [3, 3, 29],
      ],
      base: 25,
      gaps: [],
    },
    {
      name: "arrivals before page 2 only",
      runs: [
        [1, 1, 25],
        [2, 3, 29],
      ],
      base: 25,
      gaps: [],
    },
    // All three pages read after 4 arrivals hold start positions -4..25: every old booking.
    { name: "arrivals before every page", runs: [[1, 3, 29]], base: 25, gaps: [] },
    // Page 1 read after 3 arrivals ends at start position 7; page 2 (read before) began at 10.
    {
      name: "page 1 late after arrivals",
      runs: [
        [1, 1, 28],
        [2, 3, 25],
      ],
      base: 25,
      gaps: [[7, 10]],
    },
    {
      name: "page 2 late after arrivals",
      runs: [
        [1, 1, 25],
        [3, 3, 25],
        [2, 2, 28],
      ],
      base: 25,
      gaps: [[17, 20]],
    },
    {
      name: "unread tail",
      runs: [
        [2, 2, 25],
        [1, 1, 28],
      ],
      base: 25,
      gaps: [
        [7, 10],
        [20, 25],
      ],
    },
  ];
  it.each(cases)("$name", ({ runs, base, gaps }) => {
    expect(uncovered(runs, S, base)).toEqual(gaps);
  });

  it("the tail pushed past the last page read is a gap", () => {
    // 30 bookings, pages 1..3 read after 4 arrivals at the top: start positions 26..29 are on page 4 now.
    expect(uncovered([[1, 3, 34]], 10, 30)).toEqual([[26, 30]]);
    expect([...pagesFor([[26, 30]], 10, 4)]).toEqual([4]);
  });
});

describe("pagesFor", () => {
  it("maps start-coordinate gaps to current pages, each page once, in order", () => {
    const gaps: Span[] = [
      [5, 8],
      [9, 12],
      [40, 41],
    ];
    expect([...pagesFor(gaps, 10, 0)]).toEqual([1, 2, 5]);
    expect([...pagesFor(gaps, 10, 3)]).toEqual([1, 2, 5]);
    expect([...pagesFor(gaps, 10, 7, 0)]).toEqual([2, 5]);
    expect([...pagesFor(gaps, 10, 7, 5)]).toEqual([2, 3, 5, 6]);
    expect(countPages(gaps, 10, 7, 5)).toBe(4);
  });
  it("a first pass is lazy: a million pages are never listed", () => {
    const pages = pagesFor([[0, 100_000_000]], 100, 0);
    expect(pages.next().value).toBe(1);
    expect(countPages([[0, 100_000_000]], 100, 0)).toBe(1_000_000);
  });
});

describe("applyRead", () => {
  const S = 10;
  const at = (covered: number, total: number | null): ListPosition => ({ covered, total });
  const cases: Array<{
    name: string;
    from: ListPosition;
    read: [number, number, number];
    to: ListPosition;
    contiguous: boolean;
  }> = [
    { name: "first page", from: START, read: [1, 100, 10], to: at(10, 100), contiguous: true },
    { name: "next page", from: at(10, 100), read: [2, 100, 10], to: at(20, 100), contiguous: true },
    // Arrivals push bookings down: the next page re-reads a few, the position does not jump.
    { name: "arrivals", from: at(10, 100), read: [2, 103, 10], to: at(20, 103), contiguous: true },
    // Two removals above us: two bookings slid onto page 2; step back before page 3.
    { name: "removals", from: at(20, 100), read: [3, 98, 10], to: at(18, 98), contiguous: false },
    { name: "re-read after removals", from: at(18, 98), read: [2, 98, 10], to: at(20, 98), contiguous: true },
    { name: "short last page", from: at(90, 95), read: [10, 95, 5], to: at(95, 95), contiguous: true },
    {
      name: "empty page past the end",
      from: at(95, 95),
      read: [10, 95, 0],
      to: at(95, 95),
      contiguous: true,
    },
  ];
  it.each(cases)("$name", ({ from, read, to, contiguous }) => {
    const step = applyRead(from, { page: read[0], pageSize: S, total: read[1], count: read[2] });
    expect(step.position).toEqual(to);
    expect(step.contiguous).toBe(contiguous);
  });
  it("asks for the page of the first uncovered position and knows the end", () => {
    expect(pageFor(at(18, 98), 10)).toBe(2);
    expect(pageFor(at(20, 98), 10)).toBe(3);
    expect(atEnd(at(95, 95))).toBe(true);
    expect(atEnd(START)).toBe(false);
  });
});

describe("the backfill's coverage loop, as a property", () => {
  it("reads every booking that existed at the start, whatever arrives and whatever order pages finish in", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 400 }),
        fc.integer({ min: 3, max: 25 }),
        fc.array(fc.nat(), { minLength: 1, maxLength: 200 }),
        fc.integer({ min: 1, max: 8 }),
        fc.integer(),
        (initial, pageSize, arrivals, concurrency, seed) => {
          const result = simulateBackfill(initial, pageSize, arrivals, concurrency, seed);
          expect(result.missed).toEqual([]);
          expect(result.rounds).toBeLessThanOrEqual(8);
        },
      ),
      { numRuns: 300, seed: 42 },
    );
  });
});

/**
 * A list where bookings arrive at the top between page reads, pages read `concurrency` at a time
 * and finishing in a shuffled order, driven by the real coverage functions (with the slack
 * backfill-pass.ts uses) until no gap is left. Arrivals stay below a page per batch of reads: a
 * source that grows faster than it can be read cannot be caught by any reader.
 */
function simulateBackfill(
  initial: number,
  pageSize: number,
  arrivals: number[],
  concurrency: number,
  seed: number,
) {
  const perRead = Math.floor((pageSize - 1) / concurrency);
  let next = initial;
  const list = Array.from({ length: initial }, (_, i) => initial - 1 - i); // newest first
  const seen = new Set<number>();
  let tick = 0;
  const read = (page: number) => {
    const n = (arrivals[tick++ % arrivals.length] ?? 0) % (perRead + 1);
    for (let k = 0; k < n; k++) list.unshift(next++);
    for (const id of list.slice((page - 1) * pageSize, page * pageSize)) seen.add(id);
    return list.length;
  };
  const base = read(1);
  let runs = addRead([], 1, base);
  let last = base;
  let slack = 0;
  let rng = seed;
  let rounds = 0;
  for (; rounds < 50; rounds++) {
    const gaps = uncovered(runs, pageSize, base);
    if (gaps.length === 0) break;
    const before = last;
    const pages = [...pagesFor(gaps, pageSize, last - base, slack)];
    for (let i = 0; i < pages.length; i += concurrency) {
      const batch = pages.slice(i, i + concurrency);
      for (let j = batch.length - 1; j > 0; j--) {
        rng = (rng * 1103515245 + 12345) | 0;
        const k = Math.abs(rng) % (j + 1);
        [batch[j], batch[k]] = [batch[k] as number, batch[j] as number];
      }
      for (const p of batch) {
        last = read(p);
        runs = addRead(runs, p, last);
      }
    }
    slack = last - before;
  }
  const missed = Array.from({ length: initial }, (_, i) => i).filter((id) => !seen.has(id));
  return { missed, rounds };
}
