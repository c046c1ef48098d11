/**
 * Detail enrichment (`sync --details`): walks list-bookings newest first until every booking needing
 * details was read or the pages are older than all of them. Its position is saved with every page,
 * so a large gap is spread over runs of at most `maxPages` pages.
 */

import { zeroCounters } from "../counters.js";
import type { BookingType, ListPage, NeedingDetails, RunCounters, SyncDeps } from "../ports.js";
import { saveProgress } from "../records.js";
import { typeSeen } from "./booking-type.js";
import { endOf } from "./list-checks.js";
import { type ListPosition, pageFor } from "./list-position.js";
import { saveListPage, type WalkEnd, walkList } from "./list-walk.js";

/** The `sync_state` stream holding an unfinished details walk. */
export const DETAILS_STREAM = "details";

/** Bookings needing details one pass holds at most; with more, it walks on until the list ends. */
export const TARGET_CAP = 20_000;

export interface DetailsOptions {
  /** Bookings per request, 1–100; default 100. */
  pageSize?: number | undefined;
  /** list-bookings pages one pass may read; default 50. */
  maxPages?: number | undefined;
  /** A typed mirror's type: other types' records are not stored; default all. */
  bookingType?: BookingType | undefined;
}

/** An unfinished details walk, as saved in `sync_state`. */
export interface DetailsProgress extends ListPosition {
  /** The next page to read (1-based). */
  page: number;
  /** The oldest createdAt read so far without a gap above it (ISO). */
  upTo: string | null;
  /** When this was saved (ISO). */
  at: string;
  /** How long the walk has taken so far (ms), its runs' passes added up; absent from an earlier version's. */
  walkedMs?: number | undefined;
}

export interface DetailsReport extends RunCounters {
  /** Bookings that needed details when the pass began (at most TARGET_CAP). */
  wanted: number;
  /** How many of them the pass read. */
  found: number;
  /**
   * How many it read past without finding (deleted at the source, most likely): each is put off
   * (`putOffMs`).
   */
  missed: number;
  /** How the walk ended; "idle" when nothing needed details. */
  end: WalkEnd | "idle";
  /** Whether the pass continued a walk an earlier run left unfinished. */
  resumed: boolean;
}

export function emptyDetailsReport(): DetailsReport {
  return { ...zeroCounters(), wanted: 0, found: 0, missed: 0, end: "idle", resumed: false };
}

/** Runs one details pass, filling `report` (`emptyDetailsReport()`). Throws when a page cannot be read; what was stored stays. */
export async function fillDetails(
  deps: SyncDeps,
  options: DetailsOptions,
  report: DetailsReport,
): Promise<void> {
  const { store, clock, logger } = deps;
  const pageSize = options.pageSize ?? 100;
  const saved = (await store.readProgress<DetailsProgress>(DETAILS_STREAM)).progress;
  const needing = await store.bookingsNeedingDetails(TARGET_CAP, clock.now().toISOString());
  report.wanted = needing.length;
  if (needing.length === 0) {
    if (saved) await saveProgress(store, { stream: DETAILS_STREAM, value: null }, clock.now().toISOString());
    return;
  }
  const remaining = new Set(needing.map((n) => n.id));
  const oldest = needing.length < TARGET_CAP ? (needing.at(-1)?.createdAt ?? null) : null;
  // A saved position already below every booking that needs details could only find nothing.
  const resume = saved !== null && !(oldest !== null && saved.upTo !== null && saved.upTo < oldest);
  report.resumed = resume;
  let upTo = resume ? saved.upTo : null;
  const began = clock.now().getTime();
  const walked = () => (resume ? (saved.walkedMs ?? 0) : 0) + clock.now().getTime() - began;
  let listed = false;
  if (resume) logger.info({ page: saved.page, savedAt: saved.at }, "details: continuing the unfinished walk");
  const { end } = await walkList(
    deps,
    {
      pageSize,
      from: resume ? { covered: saved.covered, total: saved.total } : undefined,
      maxPages: options.maxPages ?? 50,
      judge(page, step) {
        if (page.records.length > 0) listed = true;
        const pageEnd = scan(page, remaining, options.bookingType, report);
        if (step.contiguous && pageEnd !== null && (upTo === null || pageEnd < upTo)) upTo = pageEnd;
        const passedOldest = step.contiguous && oldest !== null && pageEnd !== null && pageEnd < oldest;
        return remaining.size === 0 || passedOldest;
      },
      async onPage(page, step) {
        const next = pageFor(step.position, pageSize);
        const at = clock.now().toISOString();
        const unfinished = { ...step.position, page: next, upTo, at, walkedMs: walked() };
        const value: DetailsProgress | null = step.done || step.atEnd ? null : unfinished;
        const extra = { progress: { stream: DETAILS_STREAM, value }, bookingType: options.bookingType };
        await saveListPage(deps, page, extra, report);
      },
    },
    report,
  );
  report.end = end;
  // Read past, unless the list showed nothing at all. A resumed walk began below what earlier runs
  // read: a booking newer than that may have come since.
  const passed = needing.filter(
    (n) => remaining.has(n.id) && !(resume && (saved.upTo === null || n.createdAt > saved.upTo)),
  );
  if (end !== "limit" && listed && passed.length > 0) await putOff(deps, passed, walked(), report);
  const { pages, wanted, found, missed, updated } = report;
  const fields = { pages, wanted, found, missed, updated, end };
  if (end === "limit") logger.info(fields, "details: page limit reached; the next run continues from here");
  else logger.debug(fields, "details: walk finished");
}

/**
 * Ticks off the wanted bookings a page holds (not as another type: a typed mirror does not store
 * those); returns where the page ends (list-checks.ts `endOf`).
 */
function scan(
  page: ListPage,
  remaining: Set<string>,
  bookingType: BookingType | undefined,
  report: DetailsReport,
): string | null {
  for (const r of page.records)
    if (r.id !== null && typeSeen(r, bookingType) !== "other" && remaining.delete(r.id)) report.found++;
  return endOf(page);
}

const MINUTE = 60_000;
const WEEK = 7 * 24 * 60 * MINUTE;

/**
 * How long a booking is put off after `misses` walks in a row read past it, the last of which took
 * `walkedMs`: a minute, doubling with each miss, and at least twice that walk (a walk deep down the
 * list, over several runs, holds back new bookings' details, so walks to it take a third of the time
 * at most); never over a week.
 */
export function putOffMs(misses: number, walkedMs: number): number {
  const doubling = MINUTE * 2 ** Math.min(Math.max(0, misses - 1), 20);
  return Math.min(WEEK, Math.max(doubling, 2 * walkedMs));
}

/**
 * Puts off the bookings a finished walk read past without finding (`putOffMs`), so the next passes
 * do not walk down the list to them again soon. Put off, not given up: a booking the list left out
 * for a while, or showed later than the feed, is sought again after about as long as it was away.
 */
async function putOff(
  deps: SyncDeps,
  passed: readonly NeedingDetails[],
  walkedMs: number,
  report: DetailsReport,
): Promise<void> {
  const now = deps.clock.now().getTime();
  const byMisses = new Map<number, string[]>();
  for (const { id, misses } of passed) {
    const ids = byMisses.get(misses + 1) ?? [];
    if (ids.length === 0) byMisses.set(misses + 1, ids);
    ids.push(id);
  }
  for (const [misses, ids] of byMisses) {
    const seekAfter = new Date(now + putOffMs(misses, walkedMs)).toISOString();
    report.missed += await deps.store.putOffDetails({ ids, misses, seekAfter });
  }
  deps.logger.warn(
    { missed: report.missed, misses: [...byMisses.keys()] },
    "details: bookings not found on list-bookings (deleted at the source?); put off, each time twice as long, and `reconcile` judges them",
  );
}
