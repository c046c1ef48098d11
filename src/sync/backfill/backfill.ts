/**
 * `backfill`: the sync's own fill asked to read everything — every booking through the feed's time
 * slices, every one's details through list-bookings pages — resumable, and correct while the source
 * changes. A new mirror needs no backfill (its first sync fills it); this re-reads a whole mirror.
 * A filtered one reads one source platform's list pages only and leaves the feed checkpoints alone.
 */
import { emptyTotals, FEED_STREAMS, streamName, type WalkTotals } from "../feed/walk.js";
import { runFill } from "../fill/fill.js";
import type { FillRun } from "../fill/filling.js";
import { type FillProgress, isFill, newFill, resumableProgress } from "../fill/progress.js";
import { syncStream } from "../fill/stream.js";
import { checkDrift, sourceTotal } from "../list/drift.js";
import type { BookingType, SyncDeps } from "../ports.js";
import { saveProgress } from "../records.js";
import { endRun, logEnd, type RunEnd, startRun } from "../run.js";

export { FEED_STREAMS } from "../feed/walk.js";

/** A backfill's fill: its requests at once (`concurrency`) default to 4. */
export interface BackfillOptions extends Partial<FillRun> {
  /** Only bookings of this source platform; default all (and only then are feed checkpoints set). */
  sourcePlatform?: string | undefined;
  /** Bookings per page, 1–100; default 100. */
  pageSize?: number | undefined;
  /** "resume" (default) continues unfinished progress; "restart" discards it. */
  mode?: "resume" | "restart" | undefined;
  /** A typed mirror's type: other types' records are not stored, and only this type's feed is read. */
  bookingType?: BookingType | undefined;
}

/** `checkpointAfter`: the feed checkpoint after the run (null for a filtered backfill). */
export interface BackfillReport extends WalkTotals, RunEnd {
  /** The feed stream, or `backfill:<platform>` for a filtered one. */
  stream: string;
  /** Whether this run continued an earlier, unfinished fill. */
  resumed: boolean;
}

/** Runs (or resumes) a backfill. Never throws for a failed run: the report says so. */
export async function runBackfill(deps: SyncDeps, options: BackfillOptions = {}): Promise<BackfillReport> {
  const { store } = deps;
  const { sourcePlatform, bookingType } = options;
  const filtered = sourcePlatform !== undefined;
  // A filtered backfill's progress is its own `sync_state` stream.
  const stream = filtered ? `backfill:${sourcePlatform}` : streamName(bookingType);
  // The stream's one read this run: the fill is handed it, and keeps its checkpoint current.
  const state = await store.readStream(stream);
  if (options.mode === "restart" && state.walk !== null) {
    deps.logger.info({ stream }, "backfill: discarding the unfinished fill's progress (--restart)");
    await saveProgress(store, { stream, value: null }, deps.clock.now().toISOString());
    state.walk = null;
  }
  const resumed = state.walk !== null;
  const totals = emptyTotals();
  const pageSize = Math.min(100, Math.max(1, Math.floor(options.pageSize ?? 100)));
  const walk = { stream, bookingType, pageSize };
  const run = { concurrency: options.concurrency ?? 4, onProgress: options.onProgress };
  // A filtered backfill's stream is its own: it has no checkpoint, and leaves the feed's alone.
  const checkpointBefore = filtered ? null : state.checkpoint;
  const started = await startRun(deps, { kind: "backfill", stream, checkpointBefore });
  let failure: unknown;
  try {
    if (filtered) {
      const saved = resumableProgress(state.walk);
      const fill = isFill(saved)
        ? saved
        : await platformFill(deps, sourcePlatform, pageSize, started.startedAt, totals);
      await runFill(deps, walk, run, fill, totals, state);
    } else {
      const behind = "everything" as const;
      const fill = { ...run, behind, details: true, lookbackMs: 0, startedAt: started.startedAt };
      await syncStream(deps, walk, fill, state, totals);
      if (bookingType === undefined) {
        await checkDrift(deps, started.id, totals);
        // The feed read every type: the typed streams are as complete as it is.
        const { checkpoint } = state;
        if (checkpoint !== null)
          for (const s of FEED_STREAMS) {
            const value = (await store.readStream(s)).walk;
            await saveProgress(store, { stream: s, value, checkpoint }, deps.clock.now().toISOString());
          }
      }
    }
  } catch (err) {
    failure = err;
  }
  const checkpointAfter = async () => (filtered ? null : (await store.readStream(stream)).checkpoint);
  const end = await endRun(deps, started, { counters: totals, failure, checkpointAfter });
  const report: BackfillReport = { ...totals, ...end, stream, resumed };
  logEnd(deps.logger, "backfill", report, { stream, checkpoint: report.checkpointAfter });
  return report;
}

/** A fill of one platform's list pages alone: list-bookings filters by platform, the feed does not. */
async function platformFill(
  deps: SyncDeps,
  sourcePlatform: string,
  pageSize: number,
  startedAt: string,
  totals: WalkTotals,
): Promise<FillProgress> {
  const pages = Math.ceil((await sourceTotal(deps, totals, sourcePlatform)) / pageSize);
  const details = { pageSize, pages, read: [], sourcePlatform };
  return newFill(startedAt, { floor: null, slices: [], details, plannedPages: pages });
}
