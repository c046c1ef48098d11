/**
 * Property tests of the walk over random data sets, into the real store as users run it (SQLite and
 * PostgreSQL):
 * tie runs, page sizes, either cursor rule, late arrivals inside the lookback, a server clock ahead
 * of ours, future-dated outliers, failed requests, and processes killed after a random number of
 * pages (what their batch had not committed is lost). After every round the mirror must equal the
 * source. Seeded (FC_SEED to vary); fast-check prints the seed and the shrunk case on failure.
 */
import fc from "fast-check";
import { expect, it } from "vitest";
import type { Mirror } from "../src/store/store.js";
import { streamName } from "../src/sync/feed/walk.js";
import { runSync } from "../src/sync/run-sync.js";
import { fakeFeed, fixedClock, memoryLogger, type SourceBooking } from "./support/fakes.js";
import { type Backend, describeBackends } from "./support/postgres.js";
import { type CaseMirror, propertyMirrors } from "./support/property-mirror.js";

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
    killAfterPages: fc.option(fc.integer({ min: 0, max: 8 }), { nil: undefined }),
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

/** Plays a case round by round; checks the source, the mirror and the overflows reported after each. */
async function play(
  mirrors: (batchPages: number) => Promise<CaseMirror>,
  c: Case,
  check: (source: SourceBooking[], rows: Set<string>, ties: Set<string>) => void,
) {
  const mirror = await mirrors(c.batchPages);
  const source: SourceBooking[] = [];
  const clock = fixedClock(T0);
  const logger = memoryLogger();
  const ties = new Set<string>();
  let at = T0;
  let id = 0;
  try {
    for (const round of c.rounds) {
      // New bookings are created after the previous run started (older ones are late arrivals).
      at = Math.max(at, clock.now().getTime());
      for (const run of round.runs) {
        at += run.gap;
        for (let k = 0; k < run.size; k++) source.push({ id: `b${id++}`, at });
      }
      addLate(
        source,
        (await mirror.store.readStream(streamName(undefined))).checkpoint,
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
        const kill = first ? round.killAfterPages : undefined;
        const signal = new AbortController().signal;
        // A killed process logs nothing after its death: only what it logged before counts.
        let diedAt: number | undefined;
        const died = () => {
          diedAt ??= logger.lines.length;
        };
        // Each run begins after the one before saved: what that stored counts as stored before it.
        if (!first) clock.set(clock.now().getTime() + 1);
        const report = await runSync(
          {
            api,
            store: kill === undefined ? mirror.store : dying(mirror.store, kill, died),
            clock,
            logger,
            signal,
          },
          { pageSize: c.pageSize, lookbackSeconds: LOOKBACK_MS / 1000 },
        ).catch((err: unknown) => {
          if (err !== KILLED) throw err;
          return undefined;
        });
        if (report === undefined) {
          // A killed process records no run; the tie runs it stepped past are in its log only.
          for (const t of loggedOverflows(logger.lines.slice(0, diedAt))) ties.add(t);
          await mirror.crash();
          continue;
        }
        for (const t of report.tieOverflows) ties.add(t);
        // A run that stepped past a tie it could not read fails (fakeFeed lists nothing to read it with).
        if (report.status === "success" || /could not be read whole/.test(report.error?.message ?? "")) break;
        expect(attempt, "a clean rerun must succeed").toBe(0);
      }
      check(source, new Set(await mirror.ids()), ties);
    }
  } finally {
    await mirror.close();
  }
}

const KILLED = new Error("process killed");

/**
 * The store of a process killed once `n` pages were saved: from then on, nothing it does happens.
 * `died` is told when it dies.
 */
function dying(store: Mirror, n: number, died: () => void): Mirror {
  let pages = 0;
  const dead = () => {
    if (pages <= n) return;
    died();
    throw KILLED;
  };
  return new Proxy(store, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        if (key === "save") pages++;
        dead();
        return value.apply(target, args);
      };
    },
  });
}

/** The tie runs the log says could not be read whole. */
function loggedOverflows(lines: ReturnType<typeof memoryLogger>["lines"]): string[] {
  return lines
    .filter((l) => l.level === "warn" && /rest of them could not be read/.test(l.msg ?? ""))
    .flatMap((l) => {
      const { createdAt, to } = l.obj as { createdAt: string; to?: string };
      return to ? [createdAt, to] : [createdAt];
    });
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

/**
 * Runs on PostgreSQL: a fifth of SQLite's, whose count stays. Each page there is a few round trips
 * and each case a reopened store, so the full count would take minutes; the rule they exercise is
 * the same planner both execute (test/mirror-plan.test.ts), and these runs prove its PostgreSQL
 * execution under crashes and batches.
 */
const runsOn = (backend: Backend, n: number) => (backend.kind === "sqlite" ? n : Math.ceil(n / 5));

describeBackends("the feed walk (property)", (backend) => {
  const mirrors = propertyMirrors(backend);
  it("mirrors the source exactly when tie runs fit in a page, whatever the cursor rule and crashes", async () => {
    await fc.assert(
      fc.asyncProperty(caseArb(true), async (c) => {
        await play(mirrors, c, (source, rows, ties) => {
          expect(ties.size).toBe(0);
          expect([...rows].sort()).toEqual(source.map((b) => b.id).sort());
        });
      }),
      { seed: SEED, numRuns: runsOn(backend, 300) },
    );
  });

  it("never loses a booking silently: with oversized tie runs, every missing one is at a reported overflow", async () => {
    await fc.assert(
      fc.asyncProperty(caseArb(false), async (c) => {
        await play(mirrors, c, (source, rows, ties) => {
          const missing = source.filter((b) => !rows.has(b.id));
          for (const b of missing) expect(ties.has(new Date(b.at).toISOString())).toBe(true);
        });
      }),
      { seed: SEED, numRuns: runsOn(backend, 200) },
    );
  });
});
