/**
 * One-shot backfill: every page of list-bookings (optionally one source platform), fetched by a
 * bounded pool, stored as full records (which fill the summary columns too). Resumable: progress
 * commits with each page, so a kill at any moment loses nothing and `--resume` skips what was read.
 * Correct while the source changes: pages shifted by new arrivals are re-read (backfill-pass.ts).
 *
 * At the end of an unfiltered backfill the feed checkpoints move (never backwards) to the
 * backfill's start, so the next `sync` covers everything newer and re-walks nothing older beyond
 * its lookback. Unfinished feed walks are dropped then: the fresh walk covers their range.
 */
import { coerceError, isAbortError } from "../errors.js";
import { type BackfillProgressEvent, type BackfillState, type PassTotals, readAll } from "./backfill-pass.js";
import { countFailedAttempts, runLogFields, zeroCounters } from "./counters.js";
import type { BackfillStore, ListDeps } from "./detail-ports.js";
import type { RunStatus } from "./ports.js";
import { type RepairReport, repairMirror } from "./repair.js";

export type { BackfillProgressEvent, BackfillState } from "./backfill-pass.js";

/** Feed streams whose checkpoints an unfiltered backfill sets. */
export const FEED_STREAMS = ["feed", "feed:IN", "feed:LC"] as const;

export interface BackfillOptions {
  /** Only bookings of this source platform; default all (and only then are feed checkpoints set). */
  sourcePlatform?: string | undefined;
  /** Pages fetched at once, ≥ 1; default 4. */
  concurrency?: number | undefined;
  /** Bookings per page, 1–100; default 100. A resumed backfill keeps the size it started with. */
  pageSize?: number | undefined;
  /** "resume" (default) continues unfinished progress; "restart" discards it. */
  mode?: "resume" | "restart" | undefined;
  /** Re-read rounds for shifted pages before the run gives up (and a rerun continues); default 8. */
  maxRounds?: number | undefined;
  /** Called after each page is stored. */
  onProgress?: ((event: BackfillProgressEvent) => void) | undefined;
}

export interface BackfillReport extends PassTotals {
  runId: number;
  /** `backfill`, or `backfill:<platform>` for a filtered one. */
  stream: string;
  status: Exclude<RunStatus, "running">;
  /** Whether this run continued an earlier, unfinished backfill. */
  resumed: boolean;
  /** When the backfill (not this run) began. */
  backfillStartedAt: string;
  /** The `feed` checkpoint after the run (null for a filtered backfill). */
  checkpointAfter: string | null;
  startedAt: string;
  finishedAt: string;
  durationMs: number;
  /** Why the run failed; undefined on success. */
  error?: Error | undefined;
}

/** The `sync_state` stream of a backfill's progress. */
export function backfillStream(sourcePlatform: string | undefined): string {
  return sourcePlatform ? `backfill:${sourcePlatform}` : "backfill";
}

/** Runs (or resumes) a backfill. Never throws for a failed run: the report says so. */
export async function runBackfill(
  deps: ListDeps<BackfillStore>,
  options: BackfillOptions = {},
): Promise<BackfillReport> {
  const { store, clock, logger } = deps;
  const stream = backfillStream(options.sourcePlatform);
  const started = clock.now();
  const saved = store.readProgress<BackfillState>(stream).progress;
  const resumed = saved !== null && options.mode !== "restart";
  const state: BackfillState = resumed ? saved : fresh(started.toISOString(), options);
  const filtered = state.sourcePlatform !== null;
  const checkpointBefore = filtered ? null : store.readStream("feed").checkpoint;
  const runId = store.startRun({
    kind: "backfill",
    stream,
    startedAt: started.toISOString(),
    checkpointBefore,
  });
  if (saved && !resumed)
    logger.info({ stream }, "backfill: discarding the unfinished backfill's progress (--restart)");
  if (!resumed) saveProgress(deps, stream, state);
  if (resumed)
    logger.info({ stream, since: state.startedAt }, "backfill: resuming; pages already read are skipped");
  const totals: PassTotals = { ...zeroCounters(), rounds: 0, rereadPages: 0 };
  let status: BackfillReport["status"] = "success";
  let error: Error | undefined;
  let repair: RepairReport | undefined;
  try {
    await readAll(
      deps,
      state,
      {
        stream,
        concurrency: options.concurrency ?? 4,
        maxRounds: options.maxRounds ?? 8,
        onProgress: options.onProgress,
      },
      totals,
    );
    if (!filtered) {
      repair = await repairMirror(
        deps,
        { pageSize: state.pageSize, sourceTotal: state.lastTotal ?? undefined },
        totals,
      );
      if (repair.end === "budget")
        throw new Error(
          `backfill: the mirror still lacks ${repair.shortfall} bookings the source serves after repairing ${repair.gaps} gaps; run it again to go on`,
        );
      if (repair.gaps > 0)
        logger.warn(
          { gaps: repair.gaps, repaired: repair.repaired },
          "backfill: pages shifted or repeated under the pass; the repair found and stored what they hid",
        );
      setFeedCheckpoints(deps, state.startedAt);
    }
    saveProgress(deps, stream, null);
  } catch (err) {
    countFailedAttempts(totals, err);
    error = coerceError(err);
    status = deps.signal.aborted && isAbortError(err) ? "aborted" : "failed";
  }
  const finished = clock.now();
  const checkpointAfter = filtered ? null : store.readStream("feed").checkpoint;
  store.finishRun(runId, {
    ...totals,
    status,
    finishedAt: finished.toISOString(),
    checkpointAfter,
    error: error?.message ?? null,
    gapsFound: repair?.gaps,
    repaired: repair?.repaired,
  });
  const report: BackfillReport = {
    ...totals,
    runId,
    stream,
    status,
    resumed,
    backfillStartedAt: state.startedAt,
    checkpointAfter,
    startedAt: started.toISOString(),
    finishedAt: finished.toISOString(),
    durationMs: finished.getTime() - started.getTime(),
    error,
  };
  logRun(deps.logger, report);
  return report;
}

function fresh(startedAt: string, options: BackfillOptions): BackfillState {
  const pageSize = Math.min(100, Math.max(1, Math.floor(options.pageSize ?? 100)));
  return {
    startedAt,
    sourcePlatform: options.sourcePlatform ?? null,
    pageSize,
    baseTotal: null,
    lastTotal: null,
    reads: [],
  };
}

function saveProgress(deps: ListDeps<BackfillStore>, stream: string, value: BackfillState | null): void {
  const syncedAt = deps.clock.now().toISOString();
  deps.store.commitDetailBatch({ bookings: [], rejects: [], syncedAt, progress: { stream, value } });
}

/** Moves every feed checkpoint up to `at` (the store never moves one backwards). */
function setFeedCheckpoints(deps: ListDeps<BackfillStore>, at: string): void {
  const syncedAt = deps.clock.now().toISOString();
  for (const stream of FEED_STREAMS) {
    deps.store.commitFeedBatch({ stream, bookings: [], rejects: [], walk: null, checkpoint: at, syncedAt });
  }
}

function logRun(logger: ListDeps<unknown>["logger"], r: BackfillReport): void {
  const fields = {
    ...runLogFields(r),
    stream: r.stream,
    rereadPages: r.rereadPages,
    checkpoint: r.checkpointAfter,
  };
  if (r.status === "success") logger.info(fields, "backfill finished");
  else if (r.status === "aborted")
    logger.warn(fields, "backfill stopped before it finished; run it again to resume");
  else logger.error({ ...fields, err: r.error }, `backfill failed: ${r.error?.message}`);
}
