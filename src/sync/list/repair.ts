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
      const seen = await timeAt(deps, position, counters);
      total = seen.total;
      if (seen.createdAt !== undefined) times.set(position, seen.createdAt);
      return seen.createdAt;
    };
    const deficit = async (position: number) => {
      const at = await timeOf(position);
      if (at === undefined) return true; // past the end: the list shrank, look higher
      if (at === null) return false;
      if (position + 1 - (await store.countAccounted(at)) > 0) return true;
      // The mirror's count takes a whole millisecond at once, so when the next booking shares this
      // one's, the bookings of it below here hide a shortfall above: look higher, to be sure.
      return position + 1 < total && (times.get(position + 1) ?? (await timeOf(position + 1))) === at;
    };
    if (!(await deficit(total - 1))) return { ...report, end: "unplaced" };
    const search = { deficit, times, spent };
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
  /** createdAt of the positions probed so far. */
  times: Map<number, string | null>;
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
  const timeOf = async (position: number) => {
    if (!search.times.has(position)) await search.deficit(position);
    return search.times.get(position);
  };
  let lo = -1;
  let hi = below;
  for (let misses = 0; hi > lo && misses < MAX_MISSES && !search.spent(); misses++) {
    const position = await bisect(lo, hi, search.deficit);
    const at = await timeOf(position);
    const tied = typeof at === "string" && position > 0 && (await timeOf(position - 1)) === at;
    if (!tied) {
      await readGap(deps, position, pageSize, counters);
      if ((await accounted()) > before) break;
      lo = position;
      continue;
    }
    const read = await readTieRun(deps, { from: at, to: at }, { pageSize, maxPages: 20 }, counters);
    if ((await accounted()) > before || !read.complete || read.start === undefined) break;
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
