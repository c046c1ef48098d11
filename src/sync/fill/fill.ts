/**
 * Runs a fill: its slices of the feed walked at once, each by the walk's own evidence rules, then
 * the list-bookings pages over the same bookings read at once for their details, then the few
 * bookings still without details found by position. One queue saves every page with the fill's
 * state after it, so the state stored never runs ahead of the rows (invariant 3).
 */

import { addCounts } from "../counters.js";
import { type PersistPage, type WalkOptions, type WalkTotals, walkSlice } from "../feed/walk.js";
import { instantOf, maxOf, millisOf } from "../feed/window.js";
import { inTurn, runPool } from "../pool.js";
import type { FeedPage, Progress, StreamState, SyncDeps, WalkProgress } from "../ports.js";
import { splitRecords } from "../records.js";
import { readDetailPages } from "./details.js";
import type { Filling, FillRun } from "./filling.js";
import type { FillProgress } from "./progress.js";

/** How often a fill logs how far it has got, ms. */
const PROGRESS_LOG_MS = 5_000;

/**
 * Runs (or resumes) the fill `state` to its end. Throws when a page cannot be read; what was saved
 * stays. `stored` is the stream as the run read it: its checkpoint is kept current here.
 */
export async function runFill(
  deps: SyncDeps,
  walk: WalkOptions,
  run: FillRun,
  state: FillProgress,
  totals: WalkTotals,
  stored: Pick<StreamState, "checkpoint">,
): Promise<void> {
  const filling = fillingOf(deps, walk, run, state, totals);
  const { clock, logger } = deps;
  let loggedAt = clock.now().getTime();
  const save = async (page: Pick<FeedPage, "records">, progress: Progress, upTo: string | null) => {
    const { records, rejects } = splitRecords(page.records, logger, { stream: walk.stream });
    const now = clock.now();
    const write = { records, rejects, bookingType: walk.bookingType, progress, syncedAt: now.toISOString() };
    addCounts(totals, await deps.store.save({ source: "feed", ...write }));
    // The store never moves a checkpoint backwards, nor does the run's own idea of it.
    const { checkpoint } = progress;
    if (checkpoint) stored.checkpoint = maxOf([stored.checkpoint ?? checkpoint, checkpoint]);
    if (now.getTime() - loggedAt < PROGRESS_LOG_MS) return;
    loggedAt = now.getTime();
    logger.info({ stream: walk.stream, pages: totals.pages, new: totals.inserted, upTo }, "sync progress");
  };
  const persist =
    (ceiling: string | null): PersistPage =>
    (page, progress, done) =>
      filling.commit(
        (next) => settle(next, ceiling, progress, done),
        // The last slice's page earns the checkpoint: every booking above the floor is then stored.
        (stream, next) => {
          const checkpoint = next.slices.length === 0 ? checkpointOf(next) : undefined;
          return save(page, { ...stream, checkpoint }, progress.upTo);
        },
      );
  // The lowest slice walks down to the fill's floor, under the old checkpoint, where earlier walks
  // stored what lies below before the fill began. Other slices end at their neighbours' bounds: on a
  // typed stream, which no total backs, only once the next page confirms the run below the bound.
  const lowest = { ...walk, heldBefore: state.startedAt };
  const bounded = walk.bookingType === undefined ? walk : { ...walk, confirmFloor: true };
  const walkOne = (slice: WalkProgress) => {
    const options = slice.floor !== null && slice.floor === state.floor ? lowest : bounded;
    return walkSlice(deps, options, slice, totals, persist(slice.ceiling ?? null));
  };
  await runPool([...state.slices].values(), run.concurrency, walkOne, deps.signal);
  if (state.details) await readDetailPages(filling, state.details);
}

/** The fill's shared parts: the save queue, the stream's progress, the rate and the ETA. */
function fillingOf(
  deps: SyncDeps,
  walk: WalkOptions,
  run: FillRun,
  state: FillProgress,
  totals: WalkTotals,
): Filling {
  const turn = inTurn();
  const startedMs = deps.clock.now().getTime();
  const pagesBefore = state.pages;
  const bookingsBefore = saved(totals);
  const rate = () => {
    const now = deps.clock.now().getTime();
    const elapsedSec = Math.max(0.001, (now - startedMs) / 1000);
    const perSec = (state.pages - pagesBefore) / elapsedSec;
    const etaSec = perSec > 0 ? Math.max(0, state.plannedPages - state.pages) / perSec : null;
    return { now, elapsedSec, etaSec };
  };
  const tell = () => {
    // An everyday walk (one slice, no details) is over before a bar would help.
    if (state.sliceCount <= 1 && state.details === null) return;
    const { elapsedSec, etaSec } = rate();
    const bookings = saved(totals) - bookingsBefore;
    run.onProgress?.({
      pages: state.pages,
      totalPages: Math.max(state.plannedPages, state.pages),
      bookings,
      ratePerSec: bookings / elapsedSec,
      etaSec,
    });
  };
  return {
    deps,
    walk,
    run,
    state,
    totals,
    commit: (change, write, page = true) =>
      turn(async () => {
        const { now, etaSec } = rate();
        const next: FillProgress = {
          ...state,
          slices: [...state.slices],
          pages: state.pages + (page ? 1 : 0),
        };
        next.etaAt = etaSec === null ? null : new Date(now + etaSec * 1000).toISOString();
        next.savedAt = new Date(now).toISOString();
        change(next);
        const done = next.slices.length === 0 && next.details === null;
        await write({ stream: walk.stream, value: done ? null : next }, next);
        Object.assign(state, next);
        tell();
      }),
  };
}

function saved(t: WalkTotals): number {
  return t.inserted + t.updated + t.unchanged;
}

/** Records a slice's position after a page: replaced, or gone with its newest time kept once done. */
function settle(state: FillProgress, ceiling: string | null, progress: WalkProgress, done: boolean): void {
  const i = state.slices.findIndex((s) => (s.ceiling ?? null) === ceiling);
  if (i < 0) return;
  if (done) {
    state.slices.splice(i, 1);
    if (progress.top !== null && (state.top === null || progress.top > state.top)) state.top = progress.top;
  } else state.slices[i] = progress;
}

/** The checkpoint a finished walk records: the newest createdAt seen, never past the fill's start. */
function checkpointOf(state: FillProgress): string | undefined {
  if (state.top === null) return undefined;
  const started = instantOf(state.startedAt);
  return millisOf(state.top < started ? state.top : started);
}
