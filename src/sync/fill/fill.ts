/**
 * Runs a fill: its slices of the feed walked at once, each by the walk's own evidence rules, then
 * the list-bookings pages over the same bookings read at once for their details, then the few
 * bookings still without details found by position. One queue saves every page with the fill's
 * state after it, so the state stored never runs ahead of the rows (invariant 3).
 */

import { pageSaver } from "../feed/save-page.js";
import { type PersistPage, type WalkOptions, type WalkTotals, walkSlice } from "../feed/walk.js";
import { instantOf, millisOf, minOf } from "../feed/window.js";
import { inTurn, runPool } from "../pool.js";
import type { Progress, SyncDeps, WalkProgress } from "../ports.js";
import { readDetailPages } from "./details.js";
import type { FillProgress } from "./progress.js";

export interface FillRun {
  /** Slices walked and pages read at once. */
  concurrency: number;
  /** Called after each page is saved: pages read, pages planned, bookings saved, when it should end. */
  onProgress?: ((event: FillEvent) => void) | undefined;
}

export interface FillEvent {
  pages: number;
  totalPages: number;
  /** Bookings this run saved (new, changed or seen again). */
  bookings: number;
  ratePerSec: number;
  etaSec: number | null;
}

/** The fill's shared state and its one save queue. */
export interface Filling {
  deps: SyncDeps;
  walk: WalkOptions;
  run: FillRun;
  state: FillProgress;
  totals: WalkTotals;
  /** Runs saves one at a time, in the order asked. */
  turn: ReturnType<typeof inTurn>;
  /** The stream's progress as of now: the state, or null once nothing is left. */
  progress(): Progress;
  /** Counts a saved page toward the rate and the ETA, and tells `onProgress`. */
  tick(): void;
}

/** Runs (or resumes) the fill `state` to its end. Throws when a page cannot be read; what was saved stays. */
export async function runFill(
  deps: SyncDeps,
  walk: WalkOptions,
  run: FillRun,
  state: FillProgress,
  totals: WalkTotals,
): Promise<void> {
  const filling = fillingOf(deps, walk, run, state, totals);
  const save = pageSaver(deps, walk, totals);
  const persist =
    (ceiling: string | null): PersistPage =>
    (page, progress, done) =>
      filling.turn(async () => {
        settle(state, ceiling, progress, done);
        filling.tick();
        // The last slice's page earns the checkpoint: every booking above the floor is then stored.
        const checkpoint = state.slices.length === 0 ? checkpointOf(state) : undefined;
        await save(page, { ...filling.progress(), checkpoint }, progress.upTo);
      });
  const slices = [...state.slices];
  await runPool(
    slices.values(),
    run.concurrency,
    (slice) => walkSlice(deps, walk, slice, totals, persist(slice.ceiling ?? null)),
    deps.signal,
  );
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
  const startedMs = deps.clock.now().getTime();
  const pagesBefore = state.pages;
  const bookingsBefore = saved(totals);
  return {
    deps,
    walk,
    run,
    state,
    totals,
    turn: inTurn(),
    progress() {
      const done = state.slices.length === 0 && state.details === null;
      return {
        stream: walk.stream,
        value: done ? null : { ...state, savedAt: deps.clock.now().toISOString() },
      };
    },
    tick() {
      state.pages++;
      const now = deps.clock.now().getTime();
      const elapsedSec = Math.max(0.001, (now - startedMs) / 1000);
      const perSec = (state.pages - pagesBefore) / elapsedSec;
      const left = Math.max(0, state.plannedPages - state.pages);
      const etaSec = perSec > 0 ? left / perSec : null;
      state.etaAt = etaSec === null ? null : new Date(now + etaSec * 1000).toISOString();
      const bookings = saved(totals) - bookingsBefore;
      run.onProgress?.({
        pages: state.pages,
        totalPages: Math.max(state.plannedPages, state.pages),
        bookings,
        ratePerSec: bookings / elapsedSec,
        etaSec,
      });
    },
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
  return millisOf(minOf([state.top, instantOf(state.startedAt)]));
}
