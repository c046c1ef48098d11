/**
 * When the source's total exceeds what the mirror accounts for, finds the gap by binary search over
 * list positions: at the k-th newest booking the deficit `(k + 1) - accounted(≥ t_k)` turns positive
 * below a gap. A deletion and a gap that cancel exactly are out of reach; `reconcile` compares by id.
 */

import type { RunCounters, SyncDeps } from "../ports.js";
import { sourceTotal } from "./drift.js";
import { saveListPage, walkList } from "./list-walk.js";
import { bisect, timeAt } from "./positions.js";
import { readTieRun } from "./ties.js";

export interface RepairOptions {
  /** Bookings per page when reading a gap, 1–100. */
  pageSize: number;
  /** The source's total, when a drift check has just read it (saves a request). */
  sourceTotal?: number | undefined;
}

/** Requests one repair may make. */
const BUDGET = 400;

export interface RepairReport {
  /** How a repair ended: nothing missing, gaps filled, out of budget, or a shortfall it cannot place. */
  end: "clean" | "repaired" | "budget" | "unplaced";
  /** Gaps found and read. */
  gaps: number;
  /** Bookings the repair added to the mirror. */
  repaired: number;
  /** How many bookings the source holds beyond what the mirror accounts for, at the end. */
  shortfall: number;
}

/** Finds and fills gaps until none is left, the budget is spent, or a shortfall cannot be placed. */
export async function repairMirror(
  deps: SyncDeps,
  options: RepairOptions,
  counters: RunCounters,
): Promise<RepairReport> {
  const { store, logger } = deps;
  const startRequests = counters.requests;
  const spent = () => counters.requests - startRequests >= BUDGET;
  const report: RepairReport = { end: "clean", gaps: 0, repaired: 0, shortfall: 0 };
  let total = options.sourceTotal ?? (await sourceTotal(deps, counters));
  for (;;) {
    report.shortfall = total - (await store.countAccounted());
    if (report.shortfall <= 0) return report;
    if (spent()) return { ...report, end: "budget" };
    const times = new Map<number, string | null>();
    const timeOf = async (position: number) => {
      if (times.has(position)) return times.get(position);
      // Out of budget, a probe is not made: taken as past the end, it sends the search no lower.
      if (spent()) return undefined;
      const seen = await timeAt(deps, position, counters);
      total = seen.total;
      if (seen.createdAt !== undefined) times.set(position, seen.createdAt);
      return seen.createdAt;
    };
    const lasts = new Map<string, number>();
    const lastOf = async (position: number, at: string) => {
      const last = lasts.get(at) ?? (await lastPosition(position, at, total, timeOf));
      lasts.set(at, last);
      return last;
    };
    const deficit = async (position: number) => {
      const at = await timeOf(position);
      if (at === undefined) return true; // past the end: the list shrank, look higher
      if (at === null) return false;
      // The mirror counts a whole millisecond at once, so a booking sharing it with the next is
      // judged at the millisecond's last position: every booking of it then has the same answer.
      const shared = position + 1 < total && (await timeOf(position + 1)) === at;
      const last = shared ? await lastOf(position, at) : position;
      return last + 1 - (await store.countAccounted(at)) > 0;
    };
    if (!(await deficit(total - 1))) return { ...report, end: "unplaced" };
    const search = { deficit, timeOf, lastOf, spent };
    const repaired = await findAndRead(deps, options, total - 1, search, counters);
    if (repaired === 0) return { ...report, end: spent() ? "budget" : "unplaced" };
    report.gaps++;
    report.repaired += repaired;
    report.end = "repaired";
    logger.info({ repaired }, "repair: stored bookings the mirror lacked");
  }
}

/** Places that turn out to hold no gap before a search gives up (each costs about log2(N) probes). */
const MAX_MISSES = 3;

interface Search {
  /** Whether the mirror falls short at or above a position (probes it, and records its time). */
  deficit(position: number): Promise<boolean>;
  /** createdAt at a position (probed once): null when unreadable, undefined past the list's end. */
  timeOf(position: number): Promise<string | null | undefined>;
  /** The last position of the millisecond `at`, which `position` holds. */
  lastOf(position: number, at: string): Promise<number>;
  /** Whether the run's request budget is spent. */
  spent(): boolean;
}

/**
 * Searches above `below` and reads what it finds; returns how many more bookings the mirror accounts
 * for. A search ending inside a shared millisecond reads it whole, then searches above it if need be.
 */
async function findAndRead(
  deps: SyncDeps,
  { pageSize }: RepairOptions,
  below: number,
  search: Search,
  counters: RunCounters,
): Promise<number> {
  const accounted = () => deps.store.countAccounted();
  const before = await accounted();
  const { timeOf } = search;
  let lo = -1;
  let hi = below;
  for (let misses = 0; hi > lo && misses < MAX_MISSES && !search.spent(); misses++) {
    const position = await bisect(lo, hi, search.deficit);
    if (search.spent()) break;
    const at = await timeOf(position);
    const shared =
      typeof at === "string" &&
      ((position > 0 && (await timeOf(position - 1)) === at) ||
        (position < below && (await timeOf(position + 1)) === at));
    if (!shared) {
      await readGap(deps, position, pageSize, counters);
      if ((await accounted()) > before) break;
      lo = position;
      continue;
    }
    const read = await readTieRun(deps, { from: at, to: at }, { pageSize, maxPages: 20 }, counters);
    if ((await accounted()) > before) {
      // What lies below the millisecond may be missing as well: read on from just below it.
      if (read.complete) await readGap(deps, (await search.lastOf(position, at)) + 1, pageSize, counters);
      break;
    }
    if (!read.complete || read.start === undefined) break;
    hi = read.start - 1;
  }
  return (await accounted()) - before;
}

/** Reads pages from the one holding `position` while they hold bookings the mirror lacks. */
async function readGap(
  deps: SyncDeps,
  position: number,
  pageSize: number,
  counters: RunCounters,
): Promise<void> {
  await walkList(
    deps,
    {
      pageSize,
      from: { covered: position - (position % pageSize), total: null },
      async judge(page) {
        const ids = page.records.flatMap((r) => (r.ok ? [r.id] : []));
        return (await deps.store.absentIds(ids)).length === 0;
      },
      onPage: (page) => saveListPage(deps, page, {}, counters),
    },
    counters,
  );
}

/**
 * The last list position whose booking has the time `at`, from `position`, which has it: a search
 * that doubles its step until it leaves the millisecond, then halves back.
 */
async function lastPosition(
  position: number,
  at: string,
  total: number,
  timeOf: (position: number) => Promise<string | null | undefined>,
): Promise<number> {
  let inside = position;
  let outside = total;
  for (let step = 1; inside + step < total; step *= 2) {
    if ((await timeOf(inside + step)) !== at) {
      outside = inside + step;
      break;
    }
    inside += step;
  }
  return (await bisect(inside, outside, async (q) => q >= total || (await timeOf(q)) !== at)) - 1;
}
