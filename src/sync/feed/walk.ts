/**
 * The feed walk of one stretch of time: from its upper bound (the newest booking, for an everyday
 * sync) back to its floor, each page handed on with the position after it so a killed run resumes.
 * Which stretches to walk, and the checkpoint they earn, are the fill's (fill/fill.ts).
 */

import { setImmediate as nextTurn } from "node:timers/promises";
import { coerceError, isTransient } from "../../errors.js";
import { countPage, zeroCounters } from "../counters.js";
import { confirmFeedEnd } from "../list/feed-end.js";
import { readTieRun, type TieRead, type TieWindow } from "../list/ties.js";
import type {
  BookingType,
  FeedPage,
  PageWrite,
  RunCounters,
  SyncDeps,
  SyncStore,
  WalkProgress,
} from "../ports.js";
import { type Action, advance } from "./advance.js";
import { heldBelowFloor } from "./held.js";
import { cursorFor } from "./window.js";

export interface WalkOptions {
  /** Stream name in `sync_state`, e.g. `feed` or `feed:IN`. */
  stream: string;
  bookingType?: BookingType | undefined;
  /** Bookings per request, 3–100: the floor is seen passed by a page that ends in a run below it, five long (all but one of a smaller page). */
  pageSize: number;
  /** list-bookings pages one tie run the feed cannot page through may take; default TIE_MAX_PAGES. */
  tieMaxPages?: number | undefined;
  /**
   * The feed's newest page, asked for before anything else in the run (run-sync.ts): the first walk
   * from the newest booking takes it instead of asking again; undefined once taken.
   */
  head?: (() => FeedPage | undefined) | undefined;
  /**
   * Set on the walk down to the fill's floor, under the stream's old checkpoint: when the fill began.
   * Earlier walks stored what the stream served below that floor, so a run below it ends the walk
   * only if the mirror stored each of its bookings before then.
   */
  heldBefore?: string | undefined;
  /**
   * Set on a typed fill's walks down to a bound between two slices, where no total backs the walk:
   * a run below the floor ends it only once the next page serves that run again (window.ts).
   */
  confirmFloor?: boolean | undefined;
}

/** Counters of a whole sync, plus the tie runs the feed could not page through. */
export interface WalkTotals extends RunCounters {
  /** Tie runs (createdAt) nothing read whole: some of their bookings may be missing. */
  tieOverflows: string[];
  /** Tie runs the feed could not page through that list-bookings read whole. */
  tiesRead: string[];
  /** What the source did that the run weighed against other evidence and let pass: one line each. */
  warnings: string[];
}

export function emptyTotals(): WalkTotals {
  return { ...zeroCounters(), tieOverflows: [], tiesRead: [], warnings: [] };
}

/** Every feed stream: the whole feed and each booking type's. */
export const FEED_STREAMS = ["feed", "feed:IN", "feed:LC"] as const;

/** The stream's name for a booking-type scope. */
export function streamName(bookingType: BookingType | undefined): string {
  return bookingType ? `feed:${bookingType}` : "feed";
}

/**
 * Stores a page the walk read with the walk's position after it (`done` when the page ends it). The
 * walk awaits it before the next save, so positions reach the store in order.
 */
export type PersistPage = (
  page: Pick<FeedPage, "records">,
  progress: WalkProgress,
  done: boolean,
) => Promise<void>;

/**
 * Walks the feed from `start.upTo` down to `start.floor` (one slice of a fill, or the whole of an
 * everyday sync), handing each page to `persist`. Throws when a page cannot be read or makes no
 * sense; what was persisted stays.
 */
export async function walkSlice(
  deps: SyncDeps,
  options: WalkOptions,
  start: WalkProgress,
  totals: WalkTotals,
  persist: PersistPage,
): Promise<void> {
  const { api, logger, signal } = deps;
  const { stream } = options;
  const request = (upTo: string | null, again = false) => {
    const query = { limit: options.pageSize, cursor: cursorFor(upTo), bookingType: options.bookingType };
    const page = api.fetchRecent(query, signal);
    page.catch(() => {}); // awaited below; this only keeps a prefetch that fails early from being "unhandled"
    return { upTo, again, page };
  };
  const head = start.upTo === null ? options.head?.() : undefined;
  let current = head ? { upTo: null, again: false, page: Promise.resolve(head) } : request(start.upTo);
  let progress = start;
  // The bookings below the floor the walk last read past as not stored before it began: a fall-back
  // may bring it back to them, saved by then, and a clock stepped back since would date them before.
  let readPast: ReadonlySet<string> = new Set();
  const warned = new Set<string>();
  const readOn = async () => {
    current = request(progress.upTo);
    // The client sends a request on a later turn of the event loop: let it go before the save.
    await nextTurn();
  };
  for (;;) {
    const page = await current.page;
    countPage(totals, page.attempts);
    const { held, lacked, warning, outOfPlace } = await heldBelowFloor(
      deps.store,
      options,
      { upTo: current.upTo, floor: progress.floor, page },
      readPast,
    );
    if (warning !== undefined) {
      if (!outOfPlace) readPast = new Set(lacked);
      if (!warned.has(warning)) {
        warned.add(warning);
        totals.warnings.push(`${stream}: ${warning}`);
        logger.warn({ stream, ids: lacked.slice(0, 3) }, warning);
      }
    }
    const { confirmFloor } = options;
    const read = {
      upTo: current.upTo,
      again: current.again,
      limit: options.pageSize,
      page,
      held,
      confirmFloor,
    };
    const before = progress;
    const { progress: after, action } = advance(progress, read);
    progress = after;
    const where = { stream, cursor: cursorFor(current.upTo) ?? null, records: page.records.length };
    switch (action.kind) {
      case "again":
        logger.warn(
          { ...where, problem: action.problem },
          "the feed's answer makes no sense; asking once more",
        );
        current = request(current.upTo, true);
        continue;
      case "refuse":
        // Its progress (a walk starting over) commits with the pages read before it.
        if (action.restart) await persist({ records: [] }, progress, false);
        throw new Error(`walk ${stream}: ${action.message}`);
      case "end-unconfirmed":
        await settleEnd(deps, action, options, totals);
        return persist(page, progress, true);
      case "done":
        logger.debug({ ...where, reason: action.reason }, "walk complete");
        return persist(page, progress, true);
      case "fall-back": {
        const { missing } = action;
        logger.warn(
          { ...where, expected: missing.ids.slice(0, 3), at: missing.at, fallback: action.upTo },
          "the feed did not serve again the bookings its previous page ended with; reading on from the page's next time up",
        );
        await readOn();
        break;
      }
      case "next":
        await readOn();
        break;
      case "tie":
        await readOn();
        // The page is stored before the list's bookings of the run, which were read after it: a
        // summary has no updatedAt to tell the older copy by. Its position is the one before it,
        // not yet past the run: the run's is stored with the next page.
        await persist(page, before, false);
        progress = await settleTie(deps, action, progress, options, totals);
        continue;
    }
    await persist(page, progress, false);
  }
}

/**
 * An end the feed cannot vouch for (an empty page that claims more): the walk ends there, with a
 * warning, only when the list shows no booking below it (list/feed-end.ts); otherwise it stops, to
 * resume there.
 */
async function settleEnd(
  deps: SyncDeps,
  end: Extract<Action, { kind: "end-unconfirmed" }>,
  options: WalkOptions,
  totals: WalkTotals,
): Promise<void> {
  const below = end.upTo ?? "the newest booking";
  const check = await confirmFeedEnd(deps, end.upTo, options, totals);
  if (!check.complete)
    throw new Error(
      `walk ${options.stream}: ${end.message}, asked twice, below ${below}, and ${check.why}; stopped with the checkpoint unmoved (the next run resumes at ${below})`,
    );
  const warning = `${end.message} below ${below}, and ${check.why}: taken as the feed's end`;
  totals.warnings.push(`${options.stream}: ${warning}`);
  deps.logger.warn({ stream: options.stream, upTo: end.upTo }, warning);
}

/**
 * Has a tie run read through list-bookings (list/ties.ts), or reports it as possibly incomplete. The progress after it:
 * the feed's next page must serve again the booking the list showed below the run.
 */
async function settleTie(
  deps: SyncDeps,
  window: TieWindow,
  progress: WalkProgress,
  options: WalkOptions,
  totals: WalkTotals,
): Promise<WalkProgress> {
  const one = window.to === window.from;
  const where = { stream: options.stream, createdAt: window.from, ...(one ? {} : { to: window.to }) };
  const times = one ? [window.from] : [window.from, window.to];
  const { pageSize, bookingType, tieMaxPages: maxPages } = options;
  let read: TieRead;
  const store = watched(deps.store);
  try {
    const options = { pageSize, bookingType, maxPages, known: window.known };
    read = await readTieRun({ ...deps, store }, window, options, totals);
  } catch (err) {
    // A transient failure fails the sync, which resumes here; one no run can fix would fail every
    // sync, so the run is reported instead and the walk goes on. The store's are the run's own.
    if (isTransient(err) || store.failed) throw err;
    read = { complete: false, why: `list-bookings failed: ${coerceError(err).message}` };
  }
  if (read.complete) {
    totals.tiesRead.push(...times);
    deps.logger.info(
      where,
      "a feed page ends inside the bookings of one createdAt (a full page of them, or a page a server that caps its pages may have cut); read them through list-bookings",
    );
    return read.below ? { ...progress, anchor: { at: read.below.at, ids: [read.below.id] } } : progress;
  }
  // A typed stream has no repair behind it (list-bookings cannot count one type), so what it
  // could not read stops the walk here, before its position passes the run.
  if (options.bookingType)
    throw new Error(
      `walk ${options.stream}: a feed page ends inside the bookings of ${window.from} and the rest of them could not be read (${read.why}); stopped with the checkpoint unmoved`,
    );
  totals.tieOverflows.push(...times);
  deps.logger.warn(
    { ...where, why: read.why },
    "a feed page ends inside the bookings of one createdAt and the rest of them could not be read; some may be missing until the repair finds them",
  );
  return progress;
}

/** The store's calls a tie read makes, noting whether one failed: that is the run's failure, not the list's. */
function watched(store: Pick<SyncStore, "save" | "absentIds">) {
  const out = {
    failed: false,
    save: async (page: PageWrite) => noting(() => store.save(page)),
    absentIds: async (ids: readonly string[]) => noting(() => store.absentIds(ids)),
  };
  async function noting<R>(call: () => R | Promise<R>): Promise<R> {
    try {
      return await call();
    } catch (err) {
      out.failed = true;
      throw err;
    }
  }
  return out;
}
