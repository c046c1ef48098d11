/**
 * A walk of list-bookings from a position, newest first, shared by details, reconcile, tie reads and
 * the repair; the caller stores each page and says when the walk has gone far enough.
 */
import { setImmediate as nextTurn } from "node:timers/promises";
import { addCounts, countPage, type ReadCounts } from "../counters.js";
import type {
  Awaitable,
  BookingType,
  ListPage,
  PageWrite,
  SyncDeps,
  SyncStore,
  UpsertCounts,
} from "../ports.js";
import { splitRecords } from "../records.js";
import { inScope } from "./booking-type.js";
import { type PageSeen, pageSeen, sequenceProblem } from "./list-checks.js";
import { applyRead, atEnd, type ListPosition, type ListStep, pageFor, START } from "./list-position.js";

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
  /** A saved position to continue from; default the top of the list. */
  from?: ListPosition | undefined;
  /** Pages to read at most in this walk; default no bound. */
  maxPages?: number | undefined;
  /** Whether the walk has gone far enough; asked before the next page is requested. */
  judge(page: ListPage, step: PageStep): Awaitable<boolean>;
  /** Handles each page in read order, typically storing it with the walk's progress. */
  onPage(page: ListPage, step: JudgedStep): Awaitable<void>;
}

/** Why a walk stopped: the caller was satisfied, the list ended, or the page bound was reached. */
export type WalkEnd = "done" | "end" | "limit";

interface Pending {
  number: number;
  page: Promise<ListPage>;
  cancel(): void;
}

/** Walks until `judge` says done, the list ends or `maxPages` were read; counts even when it throws. */
export async function walkList(
  deps: SyncDeps<unknown>,
  options: ListWalkOptions,
  counters: ReadCounts,
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
      countPage(counters, page.attempts);
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
      if (step.shrunkBy > 0)
        deps.logger.debug(
          { page: current.number, shrunkBy: step.shrunkBy, total: page.total },
          "the source's total dropped; stepping back so bookings that slid up are not skipped",
        );
      stalls = step.position.covered > position.covered ? 0 : stalls + 1;
      position = step.position;
      const end = atEnd(position);
      const limit = options.maxPages !== undefined && reads >= options.maxPages;
      const judged: PageStep = { ...step, page: current.number, atEnd: end, atLimit: limit };
      const done = await options.judge(page, judged);
      if (!done && !end && !limit) {
        current = request(deps, options, pageFor(position, options.pageSize));
        pending = current;
        // The client sends a request on a later turn of the event loop: let it go before the save.
        await nextTurn();
      }
      await options.onPage(page, { ...judged, done });
      const over: WalkEnd | undefined = done ? "done" : end ? "end" : limit ? "limit" : undefined;
      if (over) return { end: over, position };
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
function request(deps: SyncDeps<unknown>, options: ListWalkOptions, number: number): Pending {
  const own = new AbortController();
  const signal = AbortSignal.any([deps.signal, own.signal]);
  const page = deps.api.listBookings({ page: number, pageSize: options.pageSize }, signal);
  page.catch(() => {}); // awaited by the walk, or cancelled and dropped; never "unhandled"
  return { number, page, cancel: () => own.abort() };
}

/** The page's oldest createdAt; null when no record has one. */
export function oldestOf(page: Pick<ListPage, "records">): string | null {
  let oldest: string | null = null;
  for (const r of page.records)
    if (r.createdAt !== null && (oldest === null || r.createdAt < oldest)) oldest = r.createdAt;
  return oldest;
}

/** What a list page is saved with besides its records: the caller's run and progress, the mirror's type. */
export type ListExtra = Pick<Extract<PageWrite, { source: "list" }>, "listedBy" | "progress"> & {
  /** A typed mirror's type: the page's records of another type are not stored (booking-type.ts). */
  bookingType?: BookingType | undefined;
};

/**
 * Saves one list page (valid records and quarantined rejects) with `extra`, counts it and logs each
 * reject. Every list path saves through here, so a typed mirror never takes another type's records.
 */
export async function saveListPage(
  deps: SyncDeps<Pick<SyncStore, "save" | "absentIds">>,
  page: Pick<ListPage, "records">,
  extra: ListExtra,
  counters: UpsertCounts,
): Promise<void> {
  const { bookingType, ...write } = extra;
  const where = { endpoint: "list-bookings" };
  const kept = await inScope(deps, page.records, bookingType);
  const { records, rejects } = splitRecords(kept, deps.logger, where);
  const syncedAt = deps.clock.now().toISOString();
  addCounts(counters, await deps.store.save({ source: "list", records, rejects, syncedAt, ...write }));
}
