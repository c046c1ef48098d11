/**
 * Reconcile: re-read list-bookings over a window (bookings created since a time, or all) to pick
 * up changes the feed does not show (paid, states, amounts; through the stale-write-guarded detail
 * upsert), then, only after a walk that completed, mark the bookings in the window the source no
 * longer served (`missing_since`; never deleted, cleared when seen again).
 *
 * Which bookings the walk saw is kept in the database, not in memory: every stored page carries
 * the run id (`listed_by_run`), so the mirror's size does not matter.
 */
import { coerceError, isAbortError } from "../errors.js";
import { countFailedAttempts, runLogFields, zeroCounters } from "./counters.js";
import type { ListDeps, ReconcileStore, UnlistedScope } from "./detail-ports.js";
import { storeListPage, walkList } from "./list-walk.js";
import type { ListPage, RunCounters, RunStatus } from "./ports.js";
import { readTieRun } from "./ties.js";

export interface ReconcileOptions {
  /** Judge only bookings created at or after this time (ISO); null re-reads the whole list. */
  since: string | null;
  /** Bookings per request, 1–100; default 100. */
  pageSize?: number | undefined;
  /** Called after each page is stored. */
  onPage?: ((event: { pages: number; bookings: number; upTo: string | null }) => void) | undefined;
}

export interface ReconcileReport extends RunCounters {
  runId: number;
  status: Exclude<RunStatus, "running">;
  since: string | null;
  /** Bookings newly marked missing (only after a complete walk). */
  missing: number;
  startedAt: string;
  finishedAt: string;
  durationMs: number;
  /** Why the run failed; undefined on success. */
  error?: Error | undefined;
}

/** Runs one reconcile pass. Never throws for a failed run: the report says so. */
export async function runReconcile(
  deps: ListDeps<ReconcileStore>,
  options: ReconcileOptions,
): Promise<ReconcileReport> {
  const { store, clock } = deps;
  const started = clock.now();
  const startedAt = started.toISOString();
  const { since } = options;
  const runId = store.startRun({ kind: "reconcile", stream: "reconcile", startedAt, checkpointBefore: null });
  const totals: RunCounters = zeroCounters();
  let missing = 0;
  let status: ReconcileReport["status"] = "success";
  let error: Error | undefined;
  try {
    await passOver(deps, runId, options, totals);
    const scope = { runId, startedAt, at: clock.now().toISOString(), since };
    await lookAgain(deps, scope, options, totals);
    missing = store.markUnlisted(scope);
  } catch (err) {
    countFailedAttempts(totals, err);
    error = coerceError(err);
    status = deps.signal.aborted && isAbortError(err) ? "aborted" : "failed";
  }
  const finished = clock.now();
  store.finishRun(runId, {
    ...totals,
    status,
    finishedAt: finished.toISOString(),
    checkpointAfter: null,
    error: error?.message ?? null,
  });
  const report: ReconcileReport = {
    ...totals,
    runId,
    status,
    since,
    missing,
    startedAt,
    finishedAt: finished.toISOString(),
    durationMs: finished.getTime() - started.getTime(),
    error,
  };
  logRun(deps.logger, report);
  return report;
}

/**
 * One pass over the window, newest first, each page stored as listed by the run. Only a page with
 * no gap above it may end the walk: a gap could hide bookings in the window.
 */
async function passOver(
  deps: ListDeps<ReconcileStore>,
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
      onPage(page) {
        storeListPage(deps, page, { listedBy: runId }, totals);
        bookings += page.records.length;
        options.onPage?.({ pages: totals.pages, bookings, upTo: oldestOf(page) });
      },
    },
    totals,
  );
}

/** Unlisted bookings' distinct times looked up one by one at most; more cost a second pass instead. */
const LOOK_AGAIN_TIMES = 50;

/**
 * Makes sure no booking the source serves is marked missing: a page that shifted under the pass
 * (a delete and an insert that kept the total) hides one. Each unlisted booking is looked up again
 * by position (ties.ts), which stores the found ones as listed. When there are many, looking each up
 * (about log2(N) requests apiece) costs more than the pages of a second pass, so the window is passed
 * over again instead, and a booking neither pass listed is taken as gone.
 */
async function lookAgain(
  deps: ListDeps<ReconcileStore>,
  scope: UnlistedScope,
  options: ReconcileOptions,
  totals: RunCounters,
): Promise<void> {
  let times = deps.store.unlistedTimes(scope, LOOK_AGAIN_TIMES + 1);
  if (times.length > LOOK_AGAIN_TIMES) {
    deps.logger.info(
      { unlisted: `over ${LOOK_AGAIN_TIMES} times` },
      "reconcile: many bookings unlisted; passing over the window again",
    );
    await passOver(deps, scope.runId, options, totals);
    times = deps.store.unlistedTimes(scope, LOOK_AGAIN_TIMES + 1);
    if (times.length > LOOK_AGAIN_TIMES) return;
  }
  const pageSize = options.pageSize ?? 100;
  for (const at of times) {
    const read = await readTieRun(deps, { from: at, to: at }, { pageSize, listedBy: scope.runId }, totals);
    if (!read.complete)
      throw new Error(`reconcile: could not look up again the bookings at ${at}: ${read.why}`);
  }
}

/**
 * Whether the page ends below `since`, by place: its last two records are older. One record dated
 * off its place, anywhere on the page, cannot end the pass early.
 */
function endsBelow(page: ListPage, since: string): boolean {
  const tail = page.records.slice(-2).map((r) => r.createdAt);
  return tail.length > 0 && tail.every((t) => t !== null && t < since);
}

function oldestOf(page: ListPage): string | null {
  let oldest: string | null = null;
  for (const r of page.records)
    if (r.createdAt !== null && (oldest === null || r.createdAt < oldest)) oldest = r.createdAt;
  return oldest;
}

function logRun(logger: ListDeps<unknown>["logger"], r: ReconcileReport): void {
  const fields = { ...runLogFields(r), since: r.since, missing: r.missing };
  if (r.status === "success") logger.info(fields, "reconcile finished");
  else if (r.status === "aborted")
    logger.warn(fields, "reconcile stopped before it finished; nothing was marked missing");
  else
    logger.error(
      { ...fields, err: r.error },
      `reconcile failed (nothing was marked missing): ${r.error?.message}`,
    );
}
