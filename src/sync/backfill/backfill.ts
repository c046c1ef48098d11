/**
 * One-shot, resumable backfill of every list-bookings page by a bounded pool. An unfiltered one ends
 * by moving the feed checkpoints to its start (dropping unfinished walks), so `sync` re-walks nothing older.
 */
import { runLogFields, zeroCounters } from "../counters.js";
import { streamName } from "../feed/walk.js";
import { type RepairReport, repairMirror } from "../list/repair.js";
import type { BookingType, SyncDeps } from "../ports.js";
import { type RunEnd, recordRun } from "../run.js";
import { type BackfillProgressEvent, type BackfillState, type PassTotals, readAll } from "./backfill-pass.js";

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
  /**
   * A typed mirror's type (`SYNC_BOOKING_TYPE`): other types' records are not stored, only this
   * type's feed checkpoint is set, and no repair runs (list-bookings cannot count one type).
   */
  bookingType?: BookingType | undefined;
}

/** `checkpointAfter`: the `feed` checkpoint after the run (null for a filtered backfill). */
export interface BackfillReport extends PassTotals, RunEnd {
  /** `backfill`, or `backfill:<platform>` for a filtered one. */
  stream: string;
  /** Whether this run continued an earlier, unfinished backfill. */
  resumed: boolean;
  /** When the backfill (not this run) began. */
  backfillStartedAt: string;
}

/** The `sync_state` stream of a backfill's progress. */
export function backfillStream(sourcePlatform: string | undefined): string {
  return sourcePlatform ? `backfill:${sourcePlatform}` : "backfill";
}

/** Runs (or resumes) a backfill. Never throws for a failed run: the report says so. */
export async function runBackfill(deps: SyncDeps, options: BackfillOptions = {}): Promise<BackfillReport> {
  const { store, clock } = deps;
  const stream = backfillStream(options.sourcePlatform);
  const saved = (await store.readProgress<BackfillState>(stream)).progress;
  const resumed = saved !== null && options.mode !== "restart";
  const state: BackfillState = resumed ? saved : fresh(clock.now().toISOString(), options);
  const filtered = state.sourcePlatform !== null;
  const { bookingType } = options;
  const feed = streamName(bookingType);
  const totals: PassTotals = { ...zeroCounters(), rounds: 0, rereadPages: 0 };
  let repair: RepairReport | undefined;
  const spec = {
    kind: "backfill",
    stream,
    checkpointBefore: filtered ? null : (await store.readStream(feed)).checkpoint,
    counters: totals,
    checkpointAfter: async () => (filtered ? null : (await store.readStream(feed)).checkpoint),
    finish: () => ({ gapsFound: repair?.gaps, repaired: repair?.repaired }),
  } as const;
  const end = await recordRun(deps, spec, async (runId) => {
    await start(deps, stream, state, { saved: saved !== null, resumed });
    await readAll(
      deps,
      state,
      {
        stream,
        concurrency: options.concurrency ?? 4,
        maxRounds: options.maxRounds ?? 8,
        onProgress: options.onProgress,
        bookingType,
      },
      totals,
    );
    if (!filtered) {
      if (bookingType === undefined) repair = await repairAfterPass(deps, state, totals);
      // The pass's list total against the mirror: `status` shows the drift checked, as after a sync.
      if (bookingType === undefined && state.lastTotal !== null)
        await store.recordDrift(runId, state.lastTotal, await store.countBookings({ excludeMissing: true }));
      await setFeedCheckpoints(deps, state.startedAt, bookingType === undefined ? FEED_STREAMS : [feed]);
    }
    await saveProgress(deps, stream, null);
  });
  const report: BackfillReport = { ...totals, ...end, stream, resumed, backfillStartedAt: state.startedAt };
  logRun(deps.logger, report);
  return report;
}

/** Says whether the backfill starts, starts over or resumes; a new one saves its progress first. */
async function start(
  deps: SyncDeps,
  stream: string,
  state: BackfillState,
  how: { saved: boolean; resumed: boolean },
): Promise<void> {
  if (how.resumed) {
    deps.logger.info(
      { stream, since: state.startedAt },
      "backfill: resuming; pages already read are skipped",
    );
    return;
  }
  if (how.saved)
    deps.logger.info({ stream }, "backfill: discarding the unfinished backfill's progress (--restart)");
  await saveProgress(deps, stream, state);
}

/** The repair after a whole pass: pages that shifted or repeated under it hid bookings it finds. */
async function repairAfterPass(
  deps: SyncDeps,
  state: BackfillState,
  totals: PassTotals,
): Promise<RepairReport> {
  const repair = await repairMirror(
    deps,
    { pageSize: state.pageSize, sourceTotal: state.lastTotal ?? undefined },
    totals,
  );
  if (repair.end === "budget")
    throw new Error(
      `backfill: the mirror still lacks ${repair.shortfall} bookings the source serves after repairing ${repair.gaps} gaps; run it again to go on`,
    );
  if (repair.gaps > 0)
    deps.logger.warn(
      { gaps: repair.gaps, repaired: repair.repaired },
      "backfill: pages shifted or repeated under the pass; the repair found and stored what they hid",
    );
  return repair;
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

async function saveProgress(deps: SyncDeps, stream: string, value: BackfillState | null): Promise<void> {
  const syncedAt = deps.clock.now().toISOString();
  await deps.store.save({ source: "list", records: [], rejects: [], syncedAt, progress: { stream, value } });
}

/** Moves the feed checkpoints of `streams` up to `at` (the store never moves one backwards). */
async function setFeedCheckpoints(deps: SyncDeps, at: string, streams: readonly string[]): Promise<void> {
  const syncedAt = deps.clock.now().toISOString();
  for (const stream of streams) {
    const progress = { stream, value: null, checkpoint: at };
    await deps.store.save({ source: "feed", records: [], rejects: [], progress, syncedAt });
  }
}

function logRun(logger: SyncDeps<unknown>["logger"], r: BackfillReport): void {
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
