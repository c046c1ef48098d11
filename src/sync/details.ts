/**
 * Detail enrichment (`sync --details`): the feed only serves summaries, so bookings without
 * details (or whose summary changed since) are found on list-bookings, walked from page 1, newest
 * first, until every one of them was read or the pages are older than the oldest of them.
 *
 * A pass reads at most `maxPages` pages. Its position is saved with every page (stream `details`),
 * so a huge gap is spread over runs and the next run continues instead of re-reading pages 1..N:
 * inserts only push bookings to later pages, so continuing from the same page re-reads a few and
 * skips none (removals are handled by list-position.ts). Bookings newer than that position are
 * picked up when the walk has finished and the next one starts again from page 1.
 */

import { zeroCounters } from "./counters.js";
import type { DetailStore, ListDeps } from "./detail-ports.js";
import { pageFor } from "./list-position.js";
import { storeListPage, type WalkEnd, walkList } from "./list-walk.js";
import type { ListPage, RunCounters } from "./ports.js";

/** The `sync_state` stream holding an unfinished details walk. */
export const DETAILS_STREAM = "details";

/**
 * Bookings needing details one pass holds in memory at most (a few MB). With more, it cannot know
 * the oldest of them, so it walks on until the list ends, spread over runs by `maxPages`.
 */
export const TARGET_CAP = 20_000;

export interface DetailsOptions {
  /** Bookings per request, 1–100; default 100. */
  pageSize?: number | undefined;
  /** list-bookings pages one pass may read; default 50. */
  maxPages?: number | undefined;
  /** Called after each page is stored. */
  onPage?: ((event: { pages: number; found: number; wanted: number }) => void) | undefined;
}

/** An unfinished details walk, as saved in `sync_state`. */
export interface DetailsProgress {
  /** The next page to read (1-based). */
  page: number;
  /** Positions from the top read so far, as of `total` (see list-position.ts). */
  covered: number;
  total: number | null;
  /** The oldest createdAt read so far without a gap above it (ISO). */
  upTo: string | null;
  /** When this was saved (ISO). */
  at: string;
}

export interface DetailsReport extends RunCounters {
  /** Bookings that needed details when the pass began (at most TARGET_CAP). */
  wanted: number;
  /** How many of them the pass read. */
  found: number;
  /** How the walk ended; "idle" when nothing needed details. */
  end: WalkEnd | "idle";
  /** Whether the pass continued a walk an earlier run left unfinished. */
  resumed: boolean;
}

export function emptyDetailsReport(): DetailsReport {
  return { ...zeroCounters(), wanted: 0, found: 0, end: "idle", resumed: false };
}

/**
 * Runs one details pass, filling `report` as it goes. Throws when a page cannot be read; the pages
 * stored before (and the position reached) are kept.
 */
export async function fillDetails(
  deps: ListDeps<DetailStore>,
  options: DetailsOptions,
  report: DetailsReport,
): Promise<void> {
  const { store, clock, logger } = deps;
  const pageSize = options.pageSize ?? 100;
  const saved = store.readProgress<DetailsProgress>(DETAILS_STREAM).progress;
  const needing = store.bookingsNeedingDetails(TARGET_CAP);
  report.wanted = needing.length;
  if (needing.length === 0) {
    if (saved)
      storeListPage(deps, emptyPage(), { progress: { stream: DETAILS_STREAM, value: null } }, report);
    report.end = "idle";
    return;
  }
  const remaining = new Set(needing.map((n) => n.id));
  const oldest = needing.length < TARGET_CAP ? (needing.at(-1)?.createdAt ?? null) : null;
  // A saved position already below every booking that needs details could only find nothing.
  const resume = saved !== null && !(oldest !== null && saved.upTo !== null && saved.upTo < oldest);
  report.resumed = resume;
  let upTo = resume ? saved.upTo : null;
  if (resume) logger.info({ page: saved.page, savedAt: saved.at }, "details: continuing the unfinished walk");
  const { end } = await walkList(
    deps,
    {
      pageSize,
      from: resume ? { covered: saved.covered, total: saved.total } : undefined,
      maxPages: options.maxPages ?? 50,
      judge(page, step) {
        const pageOldest = scan(page, remaining, report);
        if (step.contiguous && pageOldest !== null && (upTo === null || pageOldest < upTo)) upTo = pageOldest;
        const passedOldest = step.contiguous && oldest !== null && pageOldest !== null && pageOldest < oldest;
        return remaining.size === 0 || passedOldest;
      },
      onPage(page, step) {
        const value: DetailsProgress | null =
          step.done || step.atEnd
            ? null
            : {
                ...step.position,
                page: pageFor(step.position, pageSize),
                upTo,
                at: clock.now().toISOString(),
              };
        storeListPage(deps, page, { progress: { stream: DETAILS_STREAM, value } }, report);
        options.onPage?.({ pages: report.pages, found: report.found, wanted: report.wanted });
      },
    },
    report,
  );
  report.end = end;
  const fields = {
    pages: report.pages,
    wanted: report.wanted,
    found: report.found,
    updated: report.updated,
    end,
  };
  if (end === "limit") logger.info(fields, "details: page limit reached; the next run continues from here");
  else logger.debug(fields, "details: walk finished");
}

/** Ticks off the wanted bookings a page holds; returns the page's oldest createdAt. */
function scan(page: ListPage, remaining: Set<string>, report: DetailsReport): string | null {
  let oldest: string | null = null;
  for (const r of page.records) {
    if (r.id !== null && remaining.delete(r.id)) report.found++;
    if (r.createdAt !== null && (oldest === null || r.createdAt < oldest)) oldest = r.createdAt;
  }
  return oldest;
}

function emptyPage(): ListPage {
  return { records: [], page: 0, pageSize: 0, total: 0, totalPages: 0, attempts: 0 };
}
