/**
 * The backfill's reading loop: passes over list-bookings with a bounded pool, each page stored in
 * one transaction together with the backfill's progress (the pages read and the total each was
 * read at), until no start position is left uncovered (see coverage.ts).
 */
import { coerceError } from "../errors.js";
import { addRead, countPages, type PageRun, pagesFor, pagesRead, spanSize, uncovered } from "./coverage.js";
import type { BackfillStore, DetailPipe, ListDeps } from "./detail-ports.js";
import { shapeProblem } from "./list-checks.js";
import { pipeListPage, storeListPage } from "./list-walk.js";
import { runPool } from "./pool.js";
import type { RunCounters } from "./ports.js";

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
}

/** Re-read rounds the backfill ran, and the pages they read. */
export interface PassTotals extends RunCounters {
  rounds: number;
  rereadPages: number;
}

/** Reads until every start position is covered; throws when a page fails or rounds run out. */
export async function readAll(
  deps: ListDeps<BackfillStore>,
  state: BackfillState,
  options: PassOptions,
  totals: PassTotals,
): Promise<void> {
  const meter = progressMeter(deps, options, pagesRead(state.reads));
  const writer: Writer = { pipe: deps.store.detailPipe?.(), failure: undefined, backlog: [], meter };
  writer.pipe?.beginDetails();
  let ended: unknown;
  try {
    await readRounds(deps, state, options, totals, writer);
  } catch (err) {
    ended = err;
    throw err;
  } finally {
    // Nothing may outlive the pass: the caller's final writes must follow every page's commit.
    await Promise.allSettled(writer.backlog);
    // A page that failed to store while the pass was already ending (stopped, or failed on
    // another page) is reported by nothing else.
    const late = writer.failure?.err;
    if (late !== undefined && late !== ended) {
      deps.logger.error(
        { err: coerceError(late) },
        "backfill: a page failed to store while the pass was ending; the next run reads it again",
      );
    }
  }
}

async function readRounds(
  deps: ListDeps<BackfillStore>,
  state: BackfillState,
  options: PassOptions,
  totals: PassTotals,
  writer: Writer,
): Promise<void> {
  const { meter } = writer;
  const read = async (page: number) => {
    await readPage(deps, state, options, totals, writer, page);
    // Waited for here, once the page's frame is gone: see `pipeListPage` on what a frame keeps.
    while (writer.backlog.length > options.concurrency) await writer.backlog.shift();
  };
  if (state.baseTotal === null) {
    meter.plan(1);
    await read(1);
    await drain(writer);
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
    await drain(writer);
    slack = Math.max(0, (state.lastTotal ?? base) - totalBefore);
  }
}

/**
 * Where pages are stored: the store's writer thread when it has one, else its own connection.
 * Through the thread a page commits while the next ones are fetched: each pool slot goes on once
 * its page is handed over, with at most `concurrency` commits outstanding, so the writer's
 * occasional long commit (a WAL checkpoint) does not hold every slot. Once a page failed to
 * store, no later page is: the progress stored with it would count the failed page as read.
 */
interface Writer {
  pipe: DetailPipe | undefined;
  failure: { err: unknown } | undefined;
  /** Commits handed over and not yet awaited, oldest first (they complete in that order). */
  backlog: Array<Promise<void>>;
  meter: ReturnType<typeof progressMeter>;
}

/** Awaits every outstanding commit; throws the first failure. */
async function drain(writer: Writer): Promise<void> {
  while (writer.backlog.length > 0) await writer.backlog.shift();
}

/**
 * Reads one page and stores it with the progress that includes it, or hands it to the writer
 * (the caller then waits while more than `concurrency` commits are outstanding).
 */
async function readPage(
  deps: ListDeps<BackfillStore>,
  state: BackfillState,
  options: PassOptions,
  totals: PassTotals,
  writer: Writer,
  page: number,
): Promise<void> {
  const { pageSize } = state;
  const res = await deps.api.listBookings(
    { page, pageSize, sourcePlatform: state.sourcePlatform ?? undefined },
    deps.signal,
  );
  totals.pages++;
  totals.requests += res.attempts;
  totals.retries += res.attempts - 1;
  const problem = shapeProblem({ page, pageSize }, res);
  if (problem !== null) throw new Error(`backfill: ${problem}; stopping before it is stored as read`);
  state.baseTotal ??= res.total;
  if (state.lastTotal !== null && res.total < state.lastTotal) {
    deps.logger.warn(
      { page, total: res.total, before: state.lastTotal },
      "backfill: the source's total dropped (bookings removed); positions are estimated as if only new bookings arrived, so run `reconcile` afterwards to be sure none slid past",
    );
  }
  state.lastTotal = res.total;
  // A short page before the end of the list covered less than its number says: leave it unread.
  const short = res.records.length < pageSize && (page - 1) * pageSize + res.records.length < res.total;
  if (short)
    deps.logger.warn({ page, records: res.records.length, total: res.total }, "backfill: short page");
  else state.reads = addRead(state.reads, page, res.total);
  if (writer.failure) throw writer.failure.err;
  const extra = { progress: { stream: options.stream, value: state } };
  const records = res.records.length;
  const failed = (err: unknown) => {
    writer.failure ??= { err };
    throw err;
  };
  if (!writer.pipe) {
    try {
      storeListPage(deps, res, extra, totals);
    } catch (err) {
      failed(err);
    }
    writer.meter.page(records);
    return;
  }
  const commit = pipeListPage(deps, writer.pipe, res, extra, totals).then(
    () => writer.meter.page(records),
    failed,
  );
  // Marked handled now; `drain` or the next slot awaits it and meets the failure then.
  commit.catch(() => {});
  writer.backlog.push(commit);
}

/** Turns pages read into progress events: pages, bookings, rate and ETA. */
function progressMeter(deps: ListDeps<BackfillStore>, options: PassOptions, pagesBefore: number) {
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
