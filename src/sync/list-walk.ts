/**
 * A sequential walk of list-bookings from a position (the top by default), newest first, with the
 * next page's request in flight while the current one is stored. Shared by the details pass and
 * reconcile; the caller stores each page and says when the walk has gone far enough.
 */
import type { DetailBatch, DetailPipe, DetailStore, ListDeps } from "./detail-ports.js";
import { type PageSeen, pageSeen, sequenceProblem } from "./list-checks.js";
import { applyRead, atEnd, type ListPosition, type ListStep, pageFor, START } from "./list-position.js";
import type { ListPage, RunCounters, UpsertCounts } from "./ports.js";

/** Reads in a row that did not move the position before the walk gives up (a server that loops). */
const MAX_STALLS = 5;

export interface PageStep extends ListStep {
  /** The 1-based page number that was read. */
  page: number;
  /** Every booking the list holds has now been read. */
  atEnd: boolean;
  /** The walk may read no further page in this run (`maxPages`). */
  atLimit: boolean;
}

/** A page's step once the caller has judged it: `done` when the walk has gone far enough. */
export interface JudgedStep extends PageStep {
  done: boolean;
}

export interface ListWalkOptions {
  /** Bookings per request, 1–100. */
  pageSize: number;
  /** Only bookings of this source platform; default all. */
  sourcePlatform?: string | undefined;
  /** A saved position to continue from; default the top of the list. */
  from?: ListPosition | undefined;
  /** Pages to read at most in this walk; default no bound. */
  maxPages?: number | undefined;
  /**
   * Says whether the walk has gone far enough with this page. Asked before the next page is
   * requested, so no request is wasted past the end.
   */
  judge(page: ListPage, step: PageStep): boolean;
  /**
   * Handles each page in read order, typically storing it with the walk's progress in one
   * transaction (no progress once `done`, `atEnd`: the walk is over).
   */
  onPage(page: ListPage, step: JudgedStep): void;
}

/** Why a walk stopped: the caller was satisfied, the list ended, or the page bound was reached. */
export type WalkEnd = "done" | "end" | "limit";

interface Pending {
  number: number;
  page: Promise<ListPage>;
  cancel(): void;
}

/**
 * Walks until `judge` says done, the list is exhausted or `maxPages` pages were read. Adds
 * pages, requests and retries to `counters` as it goes, so they are right even when it throws.
 */
export async function walkList(
  deps: ListDeps<unknown>,
  options: ListWalkOptions,
  counters: Pick<RunCounters, "pages" | "requests" | "retries">,
): Promise<{ end: WalkEnd; position: ListPosition }> {
  let position = options.from ?? START;
  let reads = 0;
  let stalls = 0;
  let before: PageSeen | undefined;
  let again = false;
  let current = request(deps, options, pageFor(position, options.pageSize));
  let pending: Pending | undefined = current;
  try {
    for (;;) {
      const page = await current.page;
      pending = undefined;
      reads++;
      counters.pages++;
      counters.requests += page.attempts;
      counters.retries += page.attempts - 1;
      const problem = sequenceProblem({ page: current.number, pageSize: options.pageSize }, page, before);
      if (problem !== null) {
        // Once may be a moment of the source's; twice, nothing can be judged from its pages.
        if (again) throw new Error(`${problem}; stopping before anything is judged from it`);
        deps.logger.warn({ problem }, "list-bookings answered a page that makes no sense; reading it again");
        again = true;
        current = request(deps, options, current.number);
        pending = current;
        continue;
      }
      again = false;
      before = pageSeen(page, current.number);
      const step = applyRead(position, {
        page: current.number,
        pageSize: options.pageSize,
        total: page.total,
        count: page.records.length,
      });
      if (step.shrunkBy > 0) {
        deps.logger.debug(
          { page: current.number, shrunkBy: step.shrunkBy, total: page.total },
          "the source's total dropped; stepping back so bookings that slid up are not skipped",
        );
      }
      stalls = step.position.covered > position.covered ? 0 : stalls + 1;
      position = step.position;
      const end = atEnd(position);
      const limit = options.maxPages !== undefined && reads >= options.maxPages;
      const judged: PageStep = { ...step, page: current.number, atEnd: end, atLimit: limit };
      const done = options.judge(page, judged);
      if (!done && !end && !limit) {
        current = request(deps, options, pageFor(position, options.pageSize));
        pending = current;
      }
      options.onPage(page, { ...judged, done });
      if (done) return { end: "done", position };
      if (end) return { end: "end", position };
      if (limit) return { end: "limit", position };
      if (stalls >= MAX_STALLS) {
        throw new Error(
          `list-bookings: ${stalls} pages in a row did not advance past position ${position.covered} of ${position.total}; stopping to avoid an endless loop`,
        );
      }
    }
  } finally {
    pending?.cancel();
  }
}

/** Starts a page request that can be cancelled on its own (an unneeded prefetch) or with the run. */
function request(deps: ListDeps<unknown>, options: ListWalkOptions, number: number): Pending {
  const own = new AbortController();
  const signal = AbortSignal.any([deps.signal, own.signal]);
  const page = deps.api.listBookings(
    { page: number, pageSize: options.pageSize, sourcePlatform: options.sourcePlatform },
    signal,
  );
  page.catch(() => {}); // awaited by the walk, or cancelled and dropped; never "unhandled"
  return { number, page, cancel: () => own.abort() };
}

/**
 * Stores one list page (valid records and quarantined rejects) with the caller's extras in one
 * transaction, adds what it did to `counters`, and logs each reject.
 */
export function storeListPage(
  deps: ListDeps<Pick<DetailStore, "commitDetailBatch">>,
  page: ListPage,
  extra: Pick<DetailBatch, "listedBy" | "progress">,
  counters: UpsertCounts,
): void {
  const batch = listBatch(deps, page, extra);
  tally(deps, batch.rejects, deps.store.commitDetailBatch(batch), counters);
}

/**
 * `storeListPage` through a writer thread: resolves once the page is committed. Not an async
 * function on purpose: a suspended one keeps its arguments, and so the page (its records and the
 * body their texts are cut from) would live as long as the writer takes, for every page in flight,
 * long enough to reach the old generation (about 15 MB more at the peak of a backfill). Only the
 * rejects are kept past the hand-over.
 */
export function pipeListPage(
  deps: ListDeps<unknown>,
  pipe: DetailPipe,
  page: ListPage,
  extra: Pick<DetailBatch, "listedBy" | "progress">,
  counters: UpsertCounts,
): Promise<void> {
  let batch: DetailBatch;
  let sent: Promise<UpsertCounts>;
  try {
    batch = listBatch(deps, page, extra);
    sent = pipe.storeDetails(batch);
  } catch (err) {
    // As a rejection, like every other failure to store: the caller stops the pass on it.
    return Promise.reject(err);
  }
  const { rejects } = batch;
  return sent.then((counts) => tally(deps, rejects, counts, counters));
}

/** A page's valid records and rejects, as one batch with the caller's extras. */
function listBatch(
  deps: ListDeps<unknown>,
  page: ListPage,
  extra: Pick<DetailBatch, "listedBy" | "progress">,
): DetailBatch {
  const bookings: DetailBatch["bookings"] = [];
  const rejects: DetailBatch["rejects"] = [];
  for (const r of page.records) {
    if (r.ok) bookings.push(r);
    else rejects.push(r);
  }
  return { bookings, rejects, syncedAt: deps.clock.now().toISOString(), ...extra };
}

/** Adds a stored batch's counts to `counters` and logs its rejects. */
function tally(
  deps: ListDeps<unknown>,
  rejects: DetailBatch["rejects"],
  counts: UpsertCounts,
  counters: UpsertCounts,
): void {
  counters.inserted += counts.inserted;
  counters.updated += counts.updated;
  counters.unchanged += counts.unchanged;
  counters.rejected += rejects.length;
  for (const r of rejects) {
    deps.logger.warn(
      { endpoint: "list-bookings", id: r.id, reason: r.reason },
      "record rejected and quarantined",
    );
  }
}
