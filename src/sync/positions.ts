/**
 * Finding a place in list-bookings by position. The list pages by position, newest first, so one
 * booking at position k (a page of one) tells its createdAt and the list's total; a binary search
 * over such probes finds a place in about log2(N) small requests. Reading the pages from there is
 * `walkList`'s job. Tie runs the feed cannot page through (ties.ts) and gaps in the mirror
 * (repair.ts) are both found this way: one way to read a stretch of the source by position.
 */
import type { ListDeps } from "./detail-ports.js";
import { shapeProblem } from "./list-checks.js";
import type { RunCounters } from "./ports.js";

/** What one probe saw: the list's total, and the booking at the position (undefined past the end). */
export interface Probe {
  total: number;
  /** createdAt (UTC, milliseconds) of the booking there; null when it had none readable. */
  createdAt: string | null | undefined;
}

/** Reads the booking at `position` (0-based, newest first) with a page of one. */
export async function probe(
  deps: ListDeps<unknown>,
  position: number,
  counters: Pick<RunCounters, "pages" | "requests" | "retries">,
): Promise<Probe> {
  const page = await deps.api.listBookings({ page: position + 1, pageSize: 1 }, deps.signal);
  counters.pages++;
  counters.requests += page.attempts;
  counters.retries += page.attempts - 1;
  // A probe that is not the one booking asked for would send every search astray.
  const problem = shapeProblem({ page: position + 1, pageSize: 1 }, page);
  if (problem !== null) throw new Error(`${problem}; positions cannot be probed`);
  return { total: page.total, createdAt: page.records[0]?.createdAt };
}

/** Probes of positions below one whose createdAt cannot be read, before the search gives up on it. */
const NULL_PROBES = 3;

/**
 * The createdAt at `position`, or at the next few positions down when a booking there has none
 * readable; undefined past the end of the list, null when none of them has one.
 */
export async function timeAt(
  deps: ListDeps<unknown>,
  position: number,
  counters: Pick<RunCounters, "pages" | "requests" | "retries">,
): Promise<{ total: number; createdAt: string | null | undefined }> {
  let seen: Probe = { total: 0, createdAt: undefined };
  for (let p = position; p <= position + NULL_PROBES; p++) {
    seen = await probe(deps, p, counters);
    if (seen.createdAt !== null) return seen;
    if (p + 1 >= seen.total) break;
  }
  return seen;
}

/**
 * The first position in (lo, hi] where `holds` is true, given that it is false at `lo` (or lo is
 * -1) and true at `hi`; `holds` need not be monotone, the answer is then a place where it turns.
 */
export async function bisect(
  lo: number,
  hi: number,
  holds: (position: number) => Promise<boolean>,
): Promise<number> {
  let a = lo;
  let b = hi;
  while (b - a > 1) {
    const mid = Math.floor((a + b) / 2);
    if (await holds(mid)) b = mid;
    else a = mid;
  }
  return b;
}
