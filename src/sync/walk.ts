/**
 * The feed walk: from the newest booking backward until the walk reaches below the stream's
 * checkpoint minus the lookback, then the checkpoint moves to the newest `createdAt` seen, capped
 * at the walk's start time (a server clock ahead of ours must not push it into the future).
 *
 * Rows and the walk's progress commit together, several pages per transaction, so progress is never
 * ahead of data and a killed run resumes where its last commit left it. The next page's request is
 * in flight while the current page is written.
 */

import { ApiError, coerceError, isAbortError } from "../errors.js";
import { countFailedAttempts, zeroCounters } from "./counters.js";
import { PageBuffer } from "./page-buffer.js";
import type { BookingType, FeedPage, RunCounters, SyncDeps, WalkProgress } from "./ports.js";
import type { TieRead, TieWindow } from "./ties.js";
import { cursorFor, instantOf, maxOf, millisOf, minOf, nextStep, shift, type Timed } from "./window.js";

export interface WalkOptions {
  /** Stream name in `sync_state`, e.g. `feed` or `feed:IN`. */
  stream: string;
  bookingType?: BookingType | undefined;
  /** Bookings per request, 1–100. */
  pageSize: number;
  /** Margin re-read below the checkpoint, ms. */
  lookbackMs: number;
  /** Pages per transaction at most; default 20. */
  batchPages?: number;
  /** Longest a read page waits for its commit, ms; default 1000. */
  batchMs?: number;
  /** The run's start; a new walk's checkpoint never moves past it. Default: when the walk starts. */
  startedAt?: Date | undefined;
  /** Called after each page is read (for progress bars and tests). */
  onPage?: (event: { stream: string; pages: number; records: number; upTo: string | null }) => void;
  /**
   * Reads the bookings of a tie run the feed cannot page through some other way (ties.ts). Without
   * it, such a run is only reported.
   */
  readTie?: ((window: TieWindow) => Promise<TieRead>) | undefined;
}

/** Counters of a whole sync, plus the tie runs the feed could not page through. */
export interface WalkTotals extends RunCounters {
  /**
   * Tie runs (their createdAt) the feed could not page through and nothing else read whole: some of
   * their bookings may be missing (logged at warn, noted on the run).
   */
  tieOverflows: string[];
  /** Tie runs the feed could not page through that `readTie` read whole. */
  tiesRead: string[];
}

export function emptyTotals(): WalkTotals {
  return { ...zeroCounters(), tieOverflows: [], tiesRead: [] };
}

/** The stream's name for a booking-type scope. */
export function streamName(bookingType: BookingType | undefined): string {
  return bookingType ? `feed:${bookingType}` : "feed";
}

/**
 * Brings one stream up to date: finishes an unfinished walk first, then walks from the newest
 * booking down to the (possibly just advanced) checkpoint. Throws when a page cannot be read or
 * makes no sense; what was read before is committed, and the checkpoint stays where it was.
 */
export async function syncStream(deps: SyncDeps, options: WalkOptions, totals: WalkTotals): Promise<void> {
  const state = deps.store.readStream(options.stream);
  if (state.walk) {
    const saved = resumable(state.walk);
    deps.logger.info(
      { stream: options.stream, upTo: saved.upTo, pages: saved.pages },
      "resuming the unfinished walk",
    );
    await walk(deps, options, saved, totals);
  }
  const { checkpoint } = deps.store.readStream(options.stream);
  const fresh: WalkProgress = {
    startedAt: (options.startedAt ?? deps.clock.now()).toISOString(),
    floor: checkpoint ? instantOf(shift(checkpoint, -options.lookbackMs)) : null,
    upTo: null,
    anchor: null,
    fallback: null,
    top: null,
    pages: 0,
  };
  await walk(deps, options, fresh, totals);
}

/** A saved walk, including one saved by an earlier version (millisecond `cursor`, no anchor). */
function resumable(saved: WalkProgress & { cursor?: string | null }): WalkProgress {
  const upTo = saved.upTo ?? saved.cursor ?? null;
  return {
    startedAt: saved.startedAt,
    floor: saved.floor === null ? null : instantOf(saved.floor),
    upTo: upTo === null ? null : instantOf(upTo),
    anchor: saved.anchor ?? null,
    fallback: saved.fallback ?? null,
    top: saved.top === null ? null : instantOf(saved.top),
    pages: saved.pages,
  };
}

interface Request {
  upTo: string | null;
  cursor: string | undefined;
  page: Promise<FeedPage>;
  /** Whether this request already repeats one whose answer made no sense. */
  again: boolean;
}

async function walk(deps: SyncDeps, options: WalkOptions, start: WalkProgress, totals: WalkTotals) {
  const { api, logger, signal } = deps;
  const progress: WalkProgress = { ...start };
  const buffer = new PageBuffer(deps, options, totals);
  const request = (upTo: string | null, again = false): Request => {
    const cursor = cursorFor(upTo);
    const page = api.fetchRecent(
      { limit: options.pageSize, cursor, bookingType: options.bookingType },
      signal,
    );
    page.catch(() => {}); // awaited below; this only keeps a prefetch that fails early from being "unhandled"
    return { upTo, cursor, page, again };
  };
  let current = request(progress.upTo);
  try {
    for (;;) {
      const page = await current.page;
      totals.pages++;
      totals.requests += page.attempts;
      totals.retries += page.attempts - 1;
      const step = advance(progress, current, page, options, logger);
      if (step === "again") {
        current = request(current.upTo, true);
        continue;
      }
      if (typeof step === "object" && "refused" in step) {
        // Its progress (a walk starting over) commits with the pages read before it.
        if (step.restart) buffer.add({ records: [], hasMore: false, attempts: 0 }, { ...progress });
        throw new Error(step.refused);
      }
      const done = step === "done";
      if (!done) current = request(progress.upTo);
      // Before the page joins the buffer: its progress is past the run, so it must not commit first.
      if (typeof step === "object") {
        const below = await settleTie(step, options, totals, logger);
        // The feed's next page must serve again the booking the list showed below the run.
        if (below) progress.anchor = { at: below.at, ids: [below.id] };
      }
      buffer.add(page, done ? null : { ...progress }, done ? checkpointOf(progress) : undefined);
      options.onPage?.({
        stream: options.stream,
        pages: progress.pages,
        records: page.records.length,
        upTo: progress.upTo,
      });
      if (done) break;
      buffer.commitIfDue();
    }
  } catch (err) {
    countFailedAttempts(totals, err);
    // Whatever was read is kept; its progress is that of its last page, so a rerun resumes there.
    try {
      buffer.commit();
    } catch (commitErr) {
      logger.error(
        { stream: options.stream, err: commitErr },
        "could not save the pages read before the failure",
      );
    }
    throw err;
  }
  buffer.commit();
}

/**
 * Applies a page to the walk's progress: whether the walk is complete, goes on, must ask the same
 * again (once), or has reached a tie run the feed cannot page through. Throws when the source
 * answered what the walk cannot make sense of; the position then stays where the evidence put it.
 */
function advance(
  progress: WalkProgress,
  request: Request,
  page: FeedPage,
  options: WalkOptions,
  logger: SyncDeps["logger"],
): "done" | "next" | "again" | TieWindow | { refused: string; restart: boolean } {
  const records: Timed[] = [];
  const rejectIds: string[] = [];
  let rejectReason: string | undefined;
  for (const r of page.records) {
    if (r.ok) records.push({ id: r.id, at: r.at });
    else {
      if (r.id !== null) rejectIds.push(r.id);
      rejectReason ??= r.reason;
    }
  }
  const step = nextStep({
    upTo: request.upTo,
    anchor: progress.anchor,
    fallback: progress.fallback,
    limit: options.pageSize,
    records,
    count: page.records.length,
    rejectIds,
    rejectReason,
    hasMore: page.hasMore,
    floor: progress.floor,
  });
  const where = { stream: options.stream, cursor: request.cursor ?? null, records: page.records.length };
  if (step.kind === "refuse") {
    if (step.retry && !request.again) {
      logger.warn({ ...where, problem: step.message }, "the feed's answer makes no sense; asking once more");
      return "again";
    }
    // A position the source will not confirm is no place to resume from: the next run walks
    // again from the newest booking down to the same floor, which only re-reads.
    const restart = !step.retry;
    if (restart) Object.assign(progress, { upTo: null, anchor: null, fallback: null });
    const next = restart
      ? "starts this walk over from the newest booking"
      : `resumes at ${request.upTo ?? "the newest booking"}`;
    return {
      refused: `walk ${options.stream}: ${step.message}; stopped with the checkpoint unmoved (the next run ${next})`,
      restart,
    };
  }
  progress.pages++;
  // The checkpoint's candidate: a record newer than the one before it on the page is out of place.
  const top = maxOf(
    records.filter((r, i) => i === 0 || (records[i - 1] as Timed).at >= r.at).map((r) => r.at),
  );
  if (top !== null && (progress.top === null || top > progress.top)) progress.top = top;
  switch (step.kind) {
    case "done":
      logger.debug({ ...where, reason: step.reason }, "walk complete");
      return "done";
    case "next":
      Object.assign(progress, { upTo: step.upTo, anchor: step.anchor, fallback: step.fallback });
      return "next";
    case "fall-back":
      logger.warn(
        { ...where, expected: step.missing.ids.slice(0, 3), at: step.missing.at, fallback: step.upTo },
        "the feed did not serve again the bookings its previous page ended with; reading on from the page's next time up",
      );
      Object.assign(progress, { upTo: step.upTo, anchor: step.anchor, fallback: null });
      return "next";
    case "tie":
      Object.assign(progress, { upTo: step.upTo, anchor: null, fallback: null });
      return {
        from: step.from,
        to: step.to,
        known: records.filter((r) => inMillis(r.at, step.from, step.to)).map((r) => r.id),
      };
  }
}
/** Has a tie run read through `readTie`, or reports it as possibly incomplete. */
async function settleTie(
  window: TieWindow,
  options: WalkOptions,
  totals: WalkTotals,
  logger: SyncDeps["logger"],
): Promise<{ id: string; at: string } | undefined> {
  const where = {
    stream: options.stream,
    createdAt: window.from,
    ...(window.to !== window.from ? { to: window.to } : {}),
  };
  const times = window.to === window.from ? [window.from] : [window.from, window.to];
  let read: TieRead = { complete: false, why: "the feed cannot page within it" };
  if (options.readTie) {
    try {
      read = await options.readTie(window);
    } catch (err) {
      // A failure a later run may not meet (network, 5xx, 429) fails the sync, which resumes at this
      // page and tries again. One no run can fix (list-bookings refused, a list that does not
      // advance) would fail every sync here: the run is reported instead and the walk goes on.
      if (isAbortError(err) || (err instanceof ApiError && err.retryable)) throw err;
      read = { complete: false, why: `list-bookings failed: ${coerceError(err).message}` };
    }
  }
  if (read.complete) {
    totals.tiesRead.push(...times);
    logger.info(
      where,
      "a full feed page of bookings shares one createdAt; read the rest of them through list-bookings",
    );
    return read.below;
  }
  // A typed stream has no repair behind it (list-bookings cannot count one type), so what it
  // could not read stops the walk here, before its position passes the run.
  if (options.bookingType)
    throw new Error(
      `walk ${options.stream}: a full page of bookings shares ${window.from} and the rest of them could not be read (${read.why}); stopped with the checkpoint unmoved`,
    );
  totals.tieOverflows.push(...times);
  logger.warn(
    { ...where, why: read.why },
    "a full page of bookings shares one createdAt and the rest of them could not be read; some may be missing until the repair finds them",
  );
  return undefined;
}

/** Whether an instant falls in the milliseconds `from` to `to`. */
function inMillis(at: string, from: string, to: string): boolean {
  const ms = millisOf(at);
  return ms >= from && ms <= to;
}

/** The checkpoint a finished walk records: the newest createdAt seen, never past the walk's start. */
function checkpointOf(progress: WalkProgress): string | undefined {
  if (progress.top === null) return undefined;
  return millisOf(minOf([progress.top, instantOf(progress.startedAt)]));
}
