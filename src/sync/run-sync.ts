/**
 * One incremental sync run: the feed walk for the configured stream, recorded in `sync_runs`.
 * Shared by the `sync` command and the daemon, so both behave the same.
 */
import { coerceError, isAbortError } from "../errors.js";
import type { BookingType, RunStatus, SyncDeps } from "./ports.js";
import { emptyTotals, streamName, syncStream, type WalkOptions, type WalkTotals } from "./walk.js";

export interface SyncOptions {
  /** Feed scope; undefined syncs all bookings. */
  bookingType?: BookingType | undefined;
  /** Bookings per request, 1–100. */
  pageSize: number;
  /** Margin re-read below the checkpoint, seconds. */
  lookbackSeconds: number;
  /** Pages per transaction at most; default 20. */
  batchPages?: number;
  onPage?: WalkOptions["onPage"];
}

export interface SyncReport extends WalkTotals {
  runId: number;
  stream: string;
  status: Exclude<RunStatus, "running">;
  checkpointBefore: string | null;
  checkpointAfter: string | null;
  startedAt: string;
  finishedAt: string;
  durationMs: number;
  /** Why the run failed; undefined on success. */
  error?: Error | undefined;
}

/** Runs one sync. Never throws for a failed sync: the report says `failed` and carries the error. */
export async function runSync(deps: SyncDeps, options: SyncOptions): Promise<SyncReport> {
  const { store, clock, logger, signal } = deps;
  const stream = streamName(options.bookingType);
  const started = clock.now();
  const checkpointBefore = store.readStream(stream).checkpoint;
  const runId = store.startRun({ kind: "sync", stream, startedAt: started.toISOString(), checkpointBefore });
  const totals = emptyTotals();
  let status: SyncReport["status"] = "success";
  let error: Error | undefined;
  try {
    await syncStream(
      deps,
      {
        stream,
        bookingType: options.bookingType,
        pageSize: options.pageSize,
        lookbackMs: options.lookbackSeconds * 1000,
        batchPages: options.batchPages,
        onPage: options.onPage,
      },
      totals,
    );
  } catch (err) {
    error = coerceError(err);
    status = signal.aborted && isAbortError(err) ? "aborted" : "failed";
  }
  const finished = clock.now();
  const checkpointAfter = store.readStream(stream).checkpoint;
  const message = error ? error.message : null;
  store.finishRun(runId, {
    ...totals,
    status,
    finishedAt: finished.toISOString(),
    checkpointAfter,
    error: totals.tieOverflows.length ? joinNote(message, totals.tieOverflows) : message,
  });
  const report: SyncReport = {
    ...totals,
    runId,
    stream,
    status,
    checkpointBefore,
    checkpointAfter,
    startedAt: started.toISOString(),
    finishedAt: finished.toISOString(),
    durationMs: finished.getTime() - started.getTime(),
    error,
  };
  logRun(deps.logger, report);
  return report;
}

function joinNote(message: string | null, ties: string[]): string {
  const note = `feed tie overflow at ${ties.join(", ")}`;
  return message ? `${message}; ${note}` : note;
}

function logRun(logger: SyncDeps["logger"], r: SyncReport): void {
  const fields = {
    runId: r.runId,
    stream: r.stream,
    status: r.status,
    new: r.inserted,
    updated: r.updated,
    unchanged: r.unchanged,
    rejected: r.rejected,
    pages: r.pages,
    requests: r.requests,
    retries: r.retries,
    durationMs: r.durationMs,
    checkpoint: r.checkpointAfter,
  };
  if (r.status === "success") logger.info(fields, "sync finished");
  else if (r.status === "aborted") logger.warn(fields, "sync stopped before it finished; the next run resumes");
  else logger.error({ ...fields, err: r.error }, `sync failed: ${r.error?.message}`);
}
