/**
 * Reads a tie run the feed cannot page through (its cursor is a time) on list-bookings, which pages
 * by position: a binary search finds the run, then pages are read until one reaches an older booking.
 * A removal during the search can land it inside the run, so the first page read must hold a newer
 * booking or be the top of the list, or the walk starts again a page higher.
 */

import { createHash } from "node:crypto";
import type { ReadCounts } from "../counters.js";
import type { Timed } from "../feed/window.js";
import type { BookingType, ListPage, RunCounters, SyncDeps, SyncStore } from "../ports.js";
import type { ListPosition } from "./list-position.js";
import { saveListPage, type WalkEnd, walkList } from "./list-walk.js";
import { bisect, timeAt } from "./positions.js";

/** Whether `readTie` read a whole run (where it starts, the booking below it if vouched for), or why not. */
export type TieRead =
  | { complete: true; start?: number | undefined; below?: Timed | undefined }
  | { complete: false; why: string };

/** The milliseconds of a tie run (`from` to `to`, both included) and the ids the feed served in it. */
export interface TieWindow {
  from: string;
  to: string;
  known: string[];
}

/** Pages of one run read at most: 100,000 bookings sharing one millisecond, at 100 a page. */
export const TIE_MAX_PAGES = 1000;

export interface TieOptions {
  /** Bookings per request, 1–100. */
  pageSize: number;
  /** The feed stream's scope: list-bookings cannot filter by type, so other types are left out. */
  bookingType?: BookingType | undefined;
  /** Pages to read at most, the search's excluded; default TIE_MAX_PAGES. */
  maxPages?: number | undefined;
  /** The reconcile run the bookings read are listed by (`PageWrite`'s `listedBy`). */
  listedBy?: number | undefined;
  /** Ids the feed already served in the run: a read that did not meet them all is not whole. */
  known?: readonly string[] | undefined;
}

/**
 * Stores every booking list-bookings serves from `from` to `to` (ms, inclusive) and says whether it
 * read them all: not if the page bound stopped it, the pages held fewer distinct bookings than the run
 * has positions (an order within a tie that changes between requests), or a booking the feed served
 * was not met. Throws when a request fails; what was stored stays.
 */
export async function readTieRun(
  deps: SyncDeps<Pick<SyncStore, "save" | "absentIds">>,
  window: Pick<TieWindow, "from" | "to">,
  options: TieOptions,
  counters: RunCounters,
): Promise<TieRead> {
  const found = await locate(deps, window.to, counters);
  if (found === null) return { complete: true, start: 0 }; // the list is empty
  const run: RunSeen = { seen: new Set() };
  // Start on the page holding the booking just above the run.
  let start = Math.max(0, found.position - 1);
  const bound = options.maxPages ?? TIE_MAX_PAGES;
  let pagesLeft = bound;
  for (;;) {
    const covered = start - (start % options.pageSize);
    const at = { covered, total: found.total, pagesLeft };
    const pass = await readPass(deps, window, options, at, run, counters);
    pagesLeft -= pass.reads;
    if (!pass.landedInside) return verdict(options, bound, found.position, pass, run);
    if (pagesLeft <= 0)
      return { complete: false, why: "the run's start was not found within the page bound" };
    const page = covered / options.pageSize + 1;
    deps.logger.debug({ ...window, page }, "tie run: starting a page higher");
    start = covered - 1;
  }
}

/** A position in the list, and the list's total when it was read. */
type Mark = { position: number; total: number };

/** What the reads of a run met: its bookings, its first and last-plus-one positions, the one below. */
interface RunSeen {
  seen: Set<string>;
  first?: Mark;
  last?: Mark;
  below?: Timed | undefined;
}

interface Pass {
  end: WalkEnd;
  position: ListPosition;
  reads: number;
  /** The first page read lies inside the run: its start is higher up. */
  landedInside: boolean;
}

/** One walk down the list from `covered`, saving the run's bookings and noting what it met. */
async function readPass(
  deps: SyncDeps<Pick<SyncStore, "save" | "absentIds">>,
  { from, to }: Pick<TieWindow, "from" | "to">,
  options: TieOptions,
  at: { covered: number; total: number; pagesLeft: number },
  run: RunSeen,
  counters: RunCounters,
): Promise<Pass> {
  const { pageSize, bookingType } = options;
  const within = (t: string | null) => t !== null && t >= from && t <= to;
  let reads = 0;
  let landedInside = false;
  const { end, position } = await walkList(
    deps,
    {
      pageSize,
      from: { covered: at.covered, total: at.total },
      maxPages: at.pagesLeft,
      judge(page, step) {
        reads++;
        // A quarantined record without a readable time holds its place in the run all the same, and
        // one without an `_id` too, known by its content.
        for (const r of page.records) {
          const key = r.id ?? keyOf(r);
          if (key !== null && (within(r.createdAt) || (!r.ok && r.createdAt === null))) run.seen.add(key);
        }
        // By place, not by any one record's date: the newer ones lead the page, the older ones
        // trail it, so a record dated off its place in the middle decides nothing.
        const newerOnes = leading(page.records, (t) => t > to);
        if (reads === 1 && at.covered > 0 && newerOnes === 0) {
          landedInside = true;
          return true;
        }
        const pageStart = (step.page - 1) * pageSize;
        // The run starts on the first page not made only of newer bookings.
        if (run.first === undefined && newerOnes < page.records.length)
          run.first = { position: pageStart + newerOnes, total: page.total };
        const olderOnes = leading([...page.records].reverse(), (t) => t < from);
        if (!step.contiguous || olderOnes === 0) return false;
        run.last = { position: pageStart + page.records.length - olderOnes, total: page.total };
        run.below = firstBelow(page, from, bookingType);
        return true;
      },
      onPage(page) {
        const records = page.records.filter((r) => within(r.createdAt));
        return saveListPage(deps, { records }, { listedBy: options.listedBy, bookingType }, counters);
      },
    },
    counters,
  );
  return { end, position, reads, landedInside };
}

/** Whether the reads met the whole run. */
function verdict(
  { known = [] }: TieOptions,
  bound: number,
  start: number,
  pass: Pass,
  run: RunSeen,
): TieRead {
  if (pass.end === "limit")
    return { complete: false, why: `the run is longer than the page bound (${bound})` };
  const unmet = known.filter((id) => !run.seen.has(id));
  if (unmet.length > 0)
    return {
      complete: false,
      why: `its pages did not hold ${unmet.length} of the bookings the feed served in it (${unmet.slice(0, 3).join(", ")})`,
    };
  const whole = { complete: true as const, start, below: run.below };
  const total = pass.position.total ?? 0;
  const last = run.last ?? (pass.end === "end" ? { position: total, total } : undefined);
  if (run.first === undefined || last === undefined) return whole;
  // Inserts and removals above the run moved its end by as much as the total moved.
  const length = last.position - run.first.position - (last.total - run.first.total);
  if (run.seen.size >= length) return whole;
  return {
    complete: false,
    why: `its pages held ${run.seen.size} distinct bookings over ${length} positions (an order within the tie that changes between requests skips some)`,
  };
}

/** The newest booking below the run, if the next record agrees with its place: the feed's next anchor. */
function firstBelow(page: ListPage, from: string, bookingType: BookingType | undefined): Timed | undefined {
  // A typed feed serves only its own type.
  const records = page.records.filter((r) => !bookingType || (r.ok && r.record.type === bookingType));
  const i = records.findIndex((r) => r.createdAt !== null && r.createdAt < from);
  const r = records[i];
  const next = records[i + 1];
  if (!r?.ok || next === undefined || next.createdAt === null || next.createdAt > r.createdAt)
    return undefined;
  return { id: r.id, at: r.at };
}

/**
 * A record without an `_id`, known by its content so a page that shows it again adds nothing; two
 * alike count once, which can only make a run look shorter than it is. Null when it cannot be read.
 */
function keyOf(r: ListPage["records"][number]): string | null {
  try {
    const text = JSON.stringify(r.raw) ?? "";
    return `\u0000${createHash("sha256").update(text).digest("hex")}`;
  } catch {
    return null;
  }
}

/** How many of `records` lead them whose createdAt passes `test`. */
function leading(records: ListPage["records"], test: (t: string) => boolean): number {
  const k = records.findIndex((r) => r.createdAt === null || !test(r.createdAt));
  return k === -1 ? records.length : k;
}

/**
 * The list position (0-based) of the newest booking created at or before `at`, and the total; null
 * when the list is empty. An unreadable createdAt counts as "at or before", which only moves the start up.
 */
export async function locate(
  deps: SyncDeps<unknown>,
  at: string,
  counters: ReadCounts,
): Promise<Mark | null> {
  let total = 0;
  const atOrBefore = async (position: number) => {
    const seen = await timeAt(deps, position, counters);
    total = seen.total;
    return seen.createdAt === undefined || seen.createdAt === null || seen.createdAt <= at;
  };
  if (await atOrBefore(0)) return total === 0 ? null : { position: 0, total };
  // Never past the end: the list may have shrunk meanwhile.
  const position = await bisect(0, total, atOrBefore);
  return { position: Math.min(position, total), total };
}
