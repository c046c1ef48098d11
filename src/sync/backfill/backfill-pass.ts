/** The backfill's reading loop: passes over list-bookings until no start position is uncovered. */

import { countPage } from "../counters.js";
import { shapeProblem } from "../list/list-checks.js";
import { saveListPage } from "../list/list-walk.js";
import type { BookingType, RunCounters, SyncDeps } from "../ports.js";
import { addRead, countPages, type PageRun, pagesFor, pagesRead, spanSize, uncovered } from "./coverage.js";
import { inTurn, runPool } from "./pool.js";

/** A backfill's resumable progress, saved in `sync_state` with every page. */
export interface BackfillState {
  /** When the backfill began (ISO); the feed checkpoints are set to it at the end. */
  startedAt: string;
  sourcePlatform: string | null;
  /** Bookings per page; a resumed backfill keeps the size its pages were read with. */
  pageSize: number;
  /** `pagination.total` of the first page read: the start coordinates' T0. */
  baseTotal: number | null;
  /** The total of the latest answer. */
  lastTotal: number | null;
  /** Pages read, as runs of consecutive pages read at one total. */
  reads: PageRun[];
}

/** What a progress bar shows. */
export interface BackfillProgressEvent {
  /** Pages read, including those of earlier runs of this backfill. */
  pages: number;
  /** Pages planned so far (grows when shifted pages are re-read). */
  totalPages: number;
  /** Bookings stored by this run. */
  bookings: number;
  /** Bookings per second in this run. */
  ratePerSec: number;
  /** Seconds left at the current rate; null until a page was read. */
  etaSec: number | null;
}

export interface PassOptions {
  stream: string;
  /** Pages in flight at once. */
  concurrency: number;
  /** Re-read rounds after the first pass before giving up. */
  maxRounds: number;
  onProgress?: ((event: BackfillProgressEvent) => void) | undefined;
  /** A typed mirror's type: other types' records are not stored. */
  bookingType?: BookingType | undefined;
}

/** Re-read rounds the backfill ran, and the pages they read. */
export interface PassTotals extends RunCounters {
  rounds: number;
  rereadPages: number;
}

/** A pass's state and what its pages share: saves run one at a time, in the order pages arrive. */
interface Pass {
  state: BackfillState;
  options: PassOptions;
  totals: PassTotals;
  meter: ReturnType<typeof progressMeter>;
  save: ReturnType<typeof inTurn>;
}

/** Reads until every start position is covered; throws when a page fails or rounds run out. */
export async function readAll(
  deps: SyncDeps,
  state: BackfillState,
  options: PassOptions,
  totals: PassTotals,
): Promise<void> {
  const meter = progressMeter(deps, options, pagesRead(state.reads));
  const save = inTurn();
  const read = (page: number) => readPage(deps, { state, options, totals, meter, save }, page);
  if (state.baseTotal === null) {
    meter.plan(1);
    await read(1);
  }
  let slack = 0;
  for (let round = 0; ; round++) {
    const base = state.baseTotal ?? 0;
    const gaps = uncovered(state.reads, state.pageSize, base);
    if (gaps.length === 0) return;
    if (round > options.maxRounds) {
      throw new Error(
        `backfill: ${spanSize(gaps)} bookings still unread after ${options.maxRounds} re-read rounds while the source kept changing; run it again to continue`,
      );
    }
    const shift = (state.lastTotal ?? base) - base;
    const planned = countPages(gaps, state.pageSize, shift, slack);
    meter.plan(planned);
    if (round > 0) {
      totals.rounds = round;
      totals.rereadPages += planned;
      deps.logger.info(
        { round, pages: planned, unread: spanSize(gaps), shift, firstGaps: gaps.slice(0, 3) },
        "backfill: re-reading bookings the source's changes shifted between pages",
      );
    }
    const totalBefore = state.lastTotal ?? base;
    await runPool(pagesFor(gaps, state.pageSize, shift, slack), options.concurrency, read, deps.signal);
    slack = Math.max(0, (state.lastTotal ?? base) - totalBefore);
  }
}

/** Reads one page and saves it with the progress that includes it. */
async function readPage(deps: SyncDeps, pass: Pass, page: number): Promise<void> {
  const { state, options, totals, meter } = pass;
  const { pageSize } = state;
  const res = await deps.api.listBookings(
    { page, pageSize, sourcePlatform: state.sourcePlatform ?? undefined },
    deps.signal,
  );
  countPage(totals, res.attempts);
  const problem = shapeProblem({ page, pageSize }, res);
  if (problem !== null) throw new Error(`backfill: ${problem}; stopping before it is stored as read`);
  if (state.lastTotal !== null && res.total < state.lastTotal) {
    deps.logger.warn(
      { page, total: res.total, before: state.lastTotal },
      "backfill: the source's total dropped (bookings removed); positions are estimated as if only new bookings arrived, so run `reconcile` afterwards to be sure none slid past",
    );
  }
  // A short page before the end of the list covered less than its number says: leave it unread.
  const short = res.records.length < pageSize && (page - 1) * pageSize + res.records.length < res.total;
  if (short)
    deps.logger.warn({ page, records: res.records.length, total: res.total }, "backfill: short page");
  // The page counts as read only once saved, and the pages saved after it build on that.
  await pass.save(async () => {
    const next: BackfillState = {
      ...state,
      baseTotal: state.baseTotal ?? res.total,
      lastTotal: res.total,
      reads: short ? state.reads : addRead(state.reads, page, res.total),
    };
    const extra = { progress: { stream: options.stream, value: next }, bookingType: options.bookingType };
    await saveListPage(deps, res, extra, totals);
    Object.assign(state, next);
  });
  meter.page(res.records.length);
}

/** Turns pages read into progress events: pages, bookings, rate and ETA. */
function progressMeter(deps: SyncDeps, options: PassOptions, pagesBefore: number) {
  const startedMs = deps.clock.now().getTime();
  let pages = pagesBefore;
  let planned = pagesBefore;
  let pagesNow = 0;
  let bookings = 0;
  return {
    plan(n: number) {
      planned += n;
    },
    page(records: number) {
      pages++;
      pagesNow++;
      bookings += records;
      const elapsedSec = Math.max(0.001, (deps.clock.now().getTime() - startedMs) / 1000);
      const etaSec = Math.max(0, planned - pages) * (elapsedSec / pagesNow);
      const ratePerSec = bookings / elapsedSec;
      options.onProgress?.({ pages, totalPages: Math.max(planned, pages), bookings, ratePerSec, etaSec });
    },
  };
}
