/**
 * Reconcile: re-reads list-bookings over a window to pick up changes the feed does not show, then,
 * only after a complete walk, marks bookings the source no longer served (`missing_since`). Who was
 * seen is kept in the database (`listed_by_run`), so the mirror's size does not matter. Marks past
 * a share of the mirror wait for a person (missing-share.ts); everything else read is kept.
 */
import { zeroCounters } from "../counters.js";
import type { BookingType, ListPage, RunCounters, SyncDeps, UnlistedScope } from "../ports.js";
import { endRun, logEnd, type RunEnd, startRun } from "../run.js";
import { endOf } from "./list-checks.js";
import { oldestOf, saveListPage, walkList } from "./list-walk.js";
import {
  DEFAULT_MAX_MISSING_PERCENT,
  recordWithheld,
  type WithheldMarks,
  withheldText,
  withholds,
} from "./missing-share.js";
import { readTieRun } from "./ties.js";

export interface ReconcileOptions {
  /** Judge only bookings created at or after this time (ISO); null re-reads the whole list. */
  since: string | null;
  /** Bookings per request, 1–100; default 100. */
  pageSize?: number | undefined;
  /** A typed mirror's type: other types' records are not stored; default all. */
  bookingType?: BookingType | undefined;
  /** Called after each page is stored. */
  onPage?: ((event: { pages: number; bookings: number; upTo: string | null }) => void) | undefined;
  /**
   * Largest share of the bookings the pass judges that it marks missing, percent (0–100); past it
   * nothing is marked and the marks are withheld. Default `DEFAULT_MAX_MISSING_PERCENT`.
   */
  maxMissingPercent?: number | undefined;
  /** Marks every booking the pass did not find, past the share too: a person's decision. Default false. */
  applyMissing?: boolean | undefined;
}

export interface ReconcileReport extends RunCounters, Omit<RunEnd, "checkpointAfter"> {
  since: string | null;
  /** Bookings newly marked missing (only after a complete walk). */
  missing: number;
  /** Marks withheld because they passed the share (none of them made); null when none were. */
  withheld: WithheldMarks | null;
}

/** Runs one reconcile pass. Never throws for a failed run: the report says so. */
export async function runReconcile(deps: SyncDeps, options: ReconcileOptions): Promise<ReconcileReport> {
  const { since } = options;
  const totals: RunCounters = zeroCounters();
  let missing = 0;
  let withheld: WithheldMarks | null = null;
  const run = await startRun(deps, { kind: "reconcile", stream: "reconcile", checkpointBefore: null });
  const { id: runId, startedAt } = run;
  let failure: unknown;
  try {
    await passOver(deps, runId, options, totals);
    // A typed mirror judges its own type only: another type's bookings are not the pass's to find.
    const { bookingType } = options;
    const scope = { runId, startedAt, at: deps.clock.now().toISOString(), since, bookingType };
    await lookAgain(deps, scope, options, totals);
    withheld = await judgeShare(deps, scope, options);
    if (withheld === null) missing = await deps.store.markUnlisted(scope);
    await recordWithheld(deps, withheld, since);
  } catch (err) {
    failure = err;
  }
  const { checkpointAfter: _, ...end } = await endRun(deps, run, { counters: totals, failure });
  const report: ReconcileReport = { ...totals, ...end, since, missing, withheld };
  const note = withheld
    ? `: ${withheldText(withheld)}; a person decides: \`booking-sync reconcile --apply-missing\``
    : undefined;
  logEnd(deps.logger, "reconcile", report, { since, missing, withheld: withheld?.count ?? 0 }, note);
  return report;
}

/** One pass over the window; only a page with no gap above it may end the walk. */
async function passOver(
  deps: SyncDeps,
  runId: number,
  options: ReconcileOptions,
  totals: RunCounters,
): Promise<void> {
  const { since } = options;
  let bookings = 0;
  await walkList(
    deps,
    {
      pageSize: options.pageSize ?? 100,
      judge(page, step) {
        return since !== null && step.contiguous && endsBelow(page, since);
      },
      async onPage(page) {
        await saveListPage(deps, page, { listedBy: runId, bookingType: options.bookingType }, totals);
        bookings += page.records.length;
        options.onPage?.({ pages: totals.pages, bookings, upTo: oldestOf(page) });
      },
    },
    totals,
  );
}

/** The marks to withhold, when they pass the share and no person asked for them; else null. */
async function judgeShare(
  deps: SyncDeps,
  scope: UnlistedScope,
  options: ReconcileOptions,
): Promise<WithheldMarks | null> {
  const { unlisted, judged } = await deps.store.countUnlisted(scope);
  const maxPercent = options.maxMissingPercent ?? DEFAULT_MAX_MISSING_PERCENT;
  if (options.applyMissing || !withholds(unlisted, judged, maxPercent)) return null;
  const { runId, at, since } = scope;
  return { count: unlisted, judged, maxPercent, runId, at, since: since ?? null };
}

/** Unlisted bookings' distinct times looked up one by one at most; more cost a second pass instead. */
const LOOK_AGAIN_TIMES = 50;

/**
 * Looks up each unlisted booking again by position (ties.ts): a page that shifted under the pass
 * hides one. When there are many, a second pass over the window is cheaper.
 */
async function lookAgain(
  deps: SyncDeps,
  scope: UnlistedScope,
  options: ReconcileOptions,
  totals: RunCounters,
): Promise<void> {
  let times = await deps.store.unlistedTimes(scope, LOOK_AGAIN_TIMES + 1);
  if (times.length > LOOK_AGAIN_TIMES) {
    deps.logger.info(
      { unlisted: `over ${LOOK_AGAIN_TIMES} times` },
      "reconcile: many bookings unlisted; passing over the window again",
    );
    await passOver(deps, scope.runId, options, totals);
    times = await deps.store.unlistedTimes(scope, LOOK_AGAIN_TIMES + 1);
    if (times.length > LOOK_AGAIN_TIMES) return;
  }
  const pageSize = options.pageSize ?? 100;
  for (const at of times) {
    const tie = { pageSize, listedBy: scope.runId, bookingType: options.bookingType };
    const read = await readTieRun(deps, { from: at, to: at }, tie, totals);
    if (!read.complete)
      throw new Error(`reconcile: could not look up again the bookings at ${at}: ${read.why}`);
  }
}

/** Whether the page ends below `since`, as its last two records say: one off its place cannot end it. */
function endsBelow(page: ListPage, since: string): boolean {
  const end = endOf(page);
  return end !== null && end < since;
}
