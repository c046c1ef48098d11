/**
 * Detail enrichment (`sync --details`): walks list-bookings newest first until every booking needing
 * details was read or the pages are older than all of them. Its position is saved with every page,
 * so a large gap is spread over runs of at most `maxPages` pages.
 */

import { coerceError, isAbortError } from "../../errors.js";
import { zeroCounters } from "../counters.js";
import type { BookingType, ListPage, RunCounters, SyncDeps } from "../ports.js";
import { saveProgress } from "../records.js";
import { type ListPosition, pageFor } from "./list-position.js";
import { endOf, saveListPage, type WalkEnd, walkList } from "./list-walk.js";
import { readTieRun } from "./ties.js";

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
}

export interface DetailsReport extends RunCounters {
  /** Bookings that needed details when the pass began (at most TARGET_CAP). */
  wanted: number;
  /** How many of them the pass read. */
  found: number;
  /**
   * How many it did not find on the list, nor then among the bookings of their time: deleted at
   * the source, most likely. Their details are not sought again until their summary changes.
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
  const now = clock.now().getTime();
  const needing = await store.bookingsNeedingDetails(TARGET_CAP, iso(now - SEEK_AGAIN_MS));
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
  if (resume) logger.info({ page: saved.page, savedAt: saved.at }, "details: continuing the unfinished walk");
  const { end } = await walkList(
    deps,
    {
      pageSize,
      from: resume ? { covered: saved.covered, total: saved.total } : undefined,
      maxPages: options.maxPages ?? 50,
      judge(page, step) {
        const pageEnd = scan(page, remaining, report);
        if (step.contiguous && pageEnd !== null && (upTo === null || pageEnd < upTo)) upTo = pageEnd;
        const passedOldest = step.contiguous && oldest !== null && pageEnd !== null && pageEnd < oldest;
        return remaining.size === 0 || passedOldest;
      },
      async onPage(page, step) {
        const next = pageFor(step.position, pageSize);
        const at = clock.now().toISOString();
        const unfinished = { ...step.position, page: next, upTo, at };
        const value: DetailsProgress | null = step.done || step.atEnd ? null : unfinished;
        const extra = { progress: { stream: DETAILS_STREAM, value }, bookingType: options.bookingType };
        await saveListPage(deps, page, extra, report);
      },
    },
    report,
  );
  report.end = end;
  // A resumed walk began below what earlier runs read: a booking newer than that may have come since.
  const read = needing.filter(
    (n) => remaining.has(n.id) && !(resume && saved.upTo !== null && n.createdAt > saved.upTo),
  );
  if (end !== "limit" && read.length > 0) await lookAgain(deps, read, { ...options, pageSize }, report);
  const { pages, wanted, found, missed, updated } = report;
  const fields = { pages, wanted, found, missed, updated, end };
  if (end === "limit") logger.info(fields, "details: page limit reached; the next run continues from here");
  else logger.debug(fields, "details: walk finished");
}

/** Ticks off the wanted bookings a page holds; returns where the page ends (list-walk.ts `endOf`). */
function scan(page: ListPage, remaining: Set<string>, report: DetailsReport): string | null {
  for (const r of page.records) if (r.id !== null && remaining.delete(r.id)) report.found++;
  return endOf(page);
}

/** Distinct times of bookings not found that one pass looks up again at most; the next pass takes the rest. */
const LOOK_AGAIN_TIMES = 20;

/** A booking the mirror first saw this recently is not marked: a list may show it later than the feed. */
const MARK_AFTER_MS = 60 * 60 * 1000;

/** A mark lapses after this long, so a booking the list left out for a while is sought again. */
export const SEEK_AGAIN_MS = 24 * 60 * 60 * 1000;

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * The wanted bookings a finished walk passed without finding (newest first): each time's bookings
 * are read again by position (ties.ts), since a page that shifted under the walk hides one, and
 * those still not found are marked, so the next passes do not walk down the list to them again.
 * Best effort, within the pass's page bound: what it cannot settle is looked for again next time.
 */
async function lookAgain(
  deps: SyncDeps,
  unfound: ReadonlyArray<{ id: string; createdAt: string }>,
  options: DetailsOptions & { pageSize: number },
  report: DetailsReport,
): Promise<void> {
  const byTime = new Map<string, string[]>();
  for (const { id, createdAt } of unfound) {
    if (!byTime.has(createdAt) && byTime.size === LOOK_AGAIN_TIMES) break;
    byTime.set(createdAt, [...(byTime.get(createdAt) ?? []), id]);
  }
  const maxPages = options.maxPages ?? 50;
  const tie = { pageSize: options.pageSize, bookingType: options.bookingType };
  try {
    for (const [at, ids] of byTime) {
      if (report.pages >= maxPages) break;
      const read = await readTieRun(deps, { from: at, to: at }, tie, report);
      // Only a whole read of the time, with bookings beside it (an empty list shows nothing), shows
      // they are not there; those it found now have their details.
      if (!read.complete || (!read.below && !read.start)) continue;
      const now = deps.clock.now().getTime();
      const missed = { ids, at: iso(now), firstSeenBefore: iso(now - MARK_AFTER_MS) };
      report.missed += await deps.store.markDetailsMissed(missed);
    }
  } catch (err) {
    if (isAbortError(err) && deps.signal.aborted) throw err;
    deps.logger.warn(
      { err: coerceError(err) },
      "details: bookings not found could not be looked up again; the next pass tries again",
    );
  }
  if (report.missed > 0)
    deps.logger.warn(
      { missed: report.missed },
      "details: bookings not found on list-bookings, nor among the bookings of their time (deleted at the source?); their details are sought again in a day, or when the feed shows them changed",
    );
}
