/**
 * Finding a place in list-bookings by position: a page of one at position k tells its createdAt and
 * the total, and a binary search over such probes finds tie runs (ties.ts) and gaps (repair.ts).
 */

import { countPage, type ReadCounts } from "../counters.js";
import type { SyncDeps } from "../ports.js";
import { shapeProblem } from "./list-checks.js";

/** What one probe saw: the list's total, and the booking at the position (undefined past the end). */
export interface Probe {
  total: number;
  /** createdAt (UTC, milliseconds) of the booking there; null when it had none readable. */
  createdAt: string | null | undefined;
  /** Its createdAt at full precision (an instant) when the record can steer: a fill's slice bound. */
  at?: string | null | undefined;
}

/** Probes of positions below one whose createdAt cannot be read, before the search gives up on it. */
const NULL_PROBES = 3;

/**
 * The createdAt at `position` (0-based, newest first) or the next few down, each read with a page of
 * one; undefined past the end, null when none is readable.
 */
export async function timeAt(
  deps: SyncDeps<unknown>,
  position: number,
  counters: ReadCounts,
): Promise<Probe> {
  let seen: Probe = { total: 0, createdAt: undefined };
  for (let p = position; p <= position + NULL_PROBES; p++) {
    const page = await deps.api.listBookings({ page: p + 1, pageSize: 1 }, deps.signal);
    countPage(counters, page.attempts);
    // A probe that is not the one booking asked for would send every search astray.
    const problem = shapeProblem({ page: p + 1, pageSize: 1 }, page);
    if (problem !== null) throw new Error(`${problem}; positions cannot be probed`);
    const record = page.records[0];
    seen = { total: page.total, createdAt: record?.createdAt, at: record?.ok ? record.at : null };
    if (seen.createdAt !== null) return seen;
    if (p + 1 >= seen.total) break;
  }
  return seen;
}

/** The first position in (lo, hi] where `holds` turns true, given false at `lo` (or -1) and true at `hi`. */
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
