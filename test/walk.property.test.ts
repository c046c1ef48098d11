/**
 * Property tests of the pure walk over random data sets: tie runs, page sizes, either cursor rule,
 * late arrivals inside the lookback, a server clock ahead of ours, future-dated outliers, and crashes at random pages and
 * commits. After every round the mirror must equal the source. Seeded (FC_SEED to vary); fast-check
 * prints the seed and the shrunk case on failure.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { runSync } from "../src/sync/run-sync.js";
import { streamName } from "../src/sync/walk.js";
import { fakeFeed, fakeStore, fixedClock, memoryLogger, type SourceBooking } from "./support/fakes.js";

const SEED = Number(process.env.FC_SEED ?? 20261123);
const LOOKBACK_MS = 10_000;
const T0 = Date.UTC(2026, 0, 1);

const roundArb = (maxRun: number) =>
  fc.record({
    runs: fc.array(
      fc.record({ size: fc.integer({ min: 1, max: maxRun }), gap: fc.integer({ min: 1, max: 3000 }) }),
      {
        maxLength: 12,
      },
    ),
    late: fc.array(fc.integer({ min: 0, max: LOOKBACK_MS - 1 }), { maxLength: 3 }),
    /** One booking dated an hour past our clock (a skewed server node). */
    futureOutlier: fc.boolean(),
    failAtRequest: fc.option(fc.integer({ min: 0, max: 8 }), { nil: undefined }),
    killAfterCommits: fc.option(fc.integer({ min: 0, max: 4 }), { nil: undefined }),
  });

const caseArb = (tieRunsFit: boolean) =>
  fc.integer({ min: 2, max: 12 }).chain((pageSize) =>
    fc.record({
      pageSize: fc.constant(pageSize),
      rule: fc.constantFrom("exclusive" as const, "inclusive" as const),
      batchPages: fc.integer({ min: 1, max: 4 }),
      clockAhead: fc.boolean(),
      rounds: fc.array(roundArb(tieRunsFit ? pageSize - 1 : pageSize * 2), { minLength: 1, maxLength: 4 }),
    }),
  );

type Case = ReturnType<typeof caseArb> extends fc.Arbitrary<infer C> ? C : never;

/** Plays a case round by round; returns the source, the store and the overflows reported. */
async function play(c: Case, check: (source: SourceBooking[], rows: Set<string>, ties: Set<string>) => void) {
  const source: SourceBooking[] = [];
  const store = fakeStore();
  const clock = fixedClock(T0);
  const logger = memoryLogger();
  const ties = new Set<string>();
  let at = T0;
  let id = 0;
  for (const round of c.rounds) {
    // New bookings are created after the previous run started (older ones are late arrivals).
    at = Math.max(at, clock.now().getTime());
    for (const run of round.runs) {
      at += run.gap;
      for (let k = 0; k < run.size; k++) source.push({ id: `b${id++}`, at });
    }
    addLate(
      source,
      store.readStream(streamName(undefined)).checkpoint,
      round.late,
      c.pageSize,
      () => `b${id++}`,
    );
    // The server's clock may run ahead of ours: then the checkpoint is capped at our run start.
    clock.set(c.clockAhead ? at - 2000 : at + 60_000);
    if (round.futureOutlier) source.push({ id: `b${id++}`, at: clock.now().getTime() + 3_600_000 + id });
    for (let attempt = 0; ; attempt++) {
      const first = attempt === 0;
      const api = fakeFeed(
        () => source,
        c.rule,
        (n) => first && n === round.failAtRequest,
      );
      if (first && round.killAfterCommits !== undefined)
        Object.assign(store, killing(store, round.killAfterCommits));
      const signal = new AbortController().signal;
      const report = await runSync(
        { api, store, clock, logger, signal },
        { pageSize: c.pageSize, lookbackSeconds: LOOKBACK_MS / 1000, batchPages: c.batchPages },
      );
      for (const t of report.tieOverflows) ties.add(t);
      store.revive();
      // A run that stepped past a tie it could not read fails: this store has no repair to vouch.
      if (report.status === "success" || /could not be read whole/.test(report.error?.message ?? "")) break;
      expect(attempt, "a clean rerun must succeed").toBe(0);
    }
    check(source, new Set(store.rows.keys()), ties);
  }
}

/** Late arrivals: committed after the last sync, created inside the lookback below its checkpoint. */
function addLate(
  source: SourceBooking[],
  checkpoint: string | null,
  late: number[],
  pageSize: number,
  nextId: () => string,
) {
  if (!checkpoint) return;
  for (const d of late) {
    const lateAt = Date.parse(checkpoint) - d;
    // Keep every tie run shorter than a page, so the feed can page through it.
    if (source.filter((b) => b.at === lateAt).length + 1 < pageSize)
      source.push({ id: nextId(), at: lateAt });
  }
}

/** Makes the store die after `n` commits for the rest of this attempt (a killed process). */
function killing(store: ReturnType<typeof fakeStore>, n: number) {
  let commits = 0;
  const commit = store.commitFeedBatch.bind(store);
  return {
    commitFeedBatch: (batch: Parameters<typeof commit>[0]) => {
      if (commits++ >= n) throw new Error("process killed");
      return commit(batch);
    },
    revive: () => {
      store.commitFeedBatch = commit;
    },
  };
}

describe("the feed walk (property)", () => {
  it("mirrors the source exactly when tie runs fit in a page, whatever the cursor rule and crashes", async () => {
    await fc.assert(
      fc.asyncProperty(caseArb(true), async (c) => {
        await play(c, (source, rows, ties) => {
          expect(ties.size).toBe(0);
          expect([...rows].sort()).toEqual(source.map((b) => b.id).sort());
        });
      }),
      { seed: SEED, numRuns: 300 },
    );
  });

  it("never loses a booking silently: with oversized tie runs, every missing one is at a reported overflow", async () => {
    await fc.assert(
      fc.asyncProperty(caseArb(false), async (c) => {
        await play(c, (source, rows, ties) => {
          const missing = source.filter((b) => !rows.has(b.id));
          for (const b of missing) expect(ties.has(new Date(b.at).toISOString())).toBe(true);
        });
      }),
      { seed: SEED, numRuns: 200 },
    );
  });
});
