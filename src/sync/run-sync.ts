/**
 * One incremental sync run: the feed walk for the configured stream, then (when asked) the details
 * pass, then a drift check, recorded in `sync_runs`. Shared by the `sync` command and the daemon,
 * so both behave the same.
 */
import { coerceError, isAbortError, wrapError } from "../errors.js";
import { runLogFields, zeroCounters } from "./counters.js";
import type { DetailStore, DriftStore, ListDeps, RepairStore } from "./detail-ports.js";
import { type DetailsReport, emptyDetailsReport, fillDetails } from "./details.js";
import { checkDrift, type Drift } from "./drift.js";
import type { BookingType, RunStatus, SyncDeps, SyncStore } from "./ports.js";
import { type RepairReport, repairMirror } from "./repair.js";
import { readTieRun, type TieWindow } from "./ties.js";
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
  /** After the walk, fill in details through list-bookings (details.ts); default false. */
  details?: boolean | undefined;
  /** list-bookings pages the details pass may read; default 50. */
  detailsMaxPages?: number | undefined;
  /** list-bookings pages one tie run the feed cannot page through may take; default TIE_MAX_PAGES. */
  tieMaxPages?: number | undefined;
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
  /** The details pass's share of the counters, when it ran. */
  details?: DetailsReport | undefined;
  /** The drift check's totals, when it ran and succeeded. */
  drift?: Drift | undefined;
  /** What the repair did, when the drift check found the mirror short. */
  repair?: RepairReport | undefined;
}

/** A store that can also serve the details pass, the drift check and the repair (the real `Store` can). */
export type FullSyncStore = SyncStore & DetailStore & DriftStore & RepairStore;

/**
 * Runs one sync. Never throws for a failed sync: the report says `failed` and carries the error.
 * The details pass and the drift check need a store with the list ports (`FullSyncStore`); a store
 * with only the feed port (the walk's fakes) skips the drift check.
 */
export async function runSync(deps: SyncDeps, options: SyncOptions): Promise<SyncReport> {
  const { store, clock, logger, signal } = deps;
  const stream = streamName(options.bookingType);
  const started = clock.now();
  const checkpointBefore = store.readStream(stream).checkpoint;
  const runId = store.startRun({ kind: "sync", stream, startedAt: started.toISOString(), checkpointBefore });
  const totals = emptyTotals();
  let status: SyncReport["status"] = "success";
  let error: Error | undefined;
  const listStore = listPorts(store);
  const readTie = listStore
    ? ({ from, to, known }: TieWindow) =>
        readTieRun(
          { ...deps, store: listStore },
          { from, to },
          {
            pageSize: options.pageSize,
            bookingType: options.bookingType,
            maxPages: options.tieMaxPages,
            known,
          },
          totals,
        )
    : undefined;
  try {
    await syncStream(
      deps,
      {
        stream,
        bookingType: options.bookingType,
        pageSize: options.pageSize,
        lookbackMs: options.lookbackSeconds * 1000,
        startedAt: started,
        batchPages: options.batchPages,
        onPage: options.onPage,
        readTie,
      },
      totals,
    );
  } catch (err) {
    error = coerceError(err);
    status = signal.aborted && isAbortError(err) ? "aborted" : "failed";
  }
  const extra = status === "success" ? await afterWalk(deps, options, runId, totals) : {};
  if (extra.error) {
    error = extra.error;
    status = signal.aborted && isAbortError(extra.error) ? "aborted" : "failed";
  } else if (
    status === "success" &&
    totals.tieOverflows.length > 0 &&
    !(extra.repair && extra.repair.shortfall <= 0)
  ) {
    // The walk stepped past a run it could not read; only a repair that left no shortfall vouches for it.
    status = "failed";
    error = new Error(
      `repair: a tie run at ${totals.tieOverflows.join(", ")} could not be read whole, and the repair could not show the mirror complete; the next run's repair goes on`,
    );
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
    gapsFound: extra.repair?.gaps,
    repaired: extra.repair?.repaired,
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
    details: extra.details,
    drift: extra.drift,
    repair: extra.repair,
  };
  logRun(logger, report);
  return report;
}

// The run's booking counts stay the feed's, so "new" means new bookings; the details pass's own
// counts are in `report.details`. Its costs (and rejects) add to the run's.
const COUNTERS = ["pages", "requests", "retries", "rejected"] as const;

type AfterWalk = { details?: DetailsReport; drift?: Drift; repair?: RepairReport; error?: Error };

/** The details pass (when asked), the drift check and the repair; their costs add to `totals`. */
async function afterWalk(
  deps: SyncDeps,
  options: SyncOptions,
  runId: number,
  totals: WalkTotals,
): Promise<AfterWalk> {
  const store = listPorts(deps.store);
  const out: AfterWalk = {};
  if (options.details) {
    if (!store) return { error: new Error("details: this store cannot store full records") };
    const details = emptyDetailsReport();
    out.details = details;
    try {
      await fillDetails(
        { ...deps, store },
        { pageSize: options.pageSize, maxPages: options.detailsMaxPages },
        details,
      );
    } catch (err) {
      out.error = wrapError("details", err);
    }
    for (const k of COUNTERS) totals[k] += details[k];
    if (out.error) return out;
  }
  // list-bookings cannot filter by booking type, so a typed stream has nothing to compare with.
  if (!store || options.bookingType !== undefined) return out;
  try {
    out.drift = await checkDrift({ ...deps, store }, runId);
    totals.requests += out.drift.attempts;
    totals.retries += out.drift.attempts - 1;
  } catch (err) {
    deps.logger.warn({ err: coerceError(err) }, "drift check failed; the sync itself is not affected");
    return out;
  }
  try {
    out.repair = await repairAfter({ ...deps, store }, options, out.drift.sourceTotal, totals);
  } catch (err) {
    out.error = wrapError("repair", err);
  }
  return out;
}

/**
 * Repairs the mirror when the source holds more than it accounts for. Leaving the budget spent
 * with bookings still missing fails the run (the next one goes on); a shortfall no page explains
 * (a total that counts what the source does not serve) is only reported.
 */
async function repairAfter(
  deps: ListDeps<FullSyncStore>,
  options: SyncOptions,
  sourceTotal: number,
  totals: WalkTotals,
): Promise<RepairReport> {
  const repairCounters = zeroCounters();
  const report = await repairMirror(deps, { pageSize: options.pageSize, sourceTotal }, repairCounters);
  for (const k of COUNTERS) totals[k] += repairCounters[k];
  const fields = { gaps: report.gaps, repaired: report.repaired, shortfall: report.shortfall };
  if (report.end === "budget")
    throw new Error(
      `the mirror still lacks ${report.shortfall} bookings the source serves after repairing ${report.gaps} gaps (${report.repaired} bookings) this run; the next run goes on`,
    );
  if (report.end === "unplaced")
    deps.logger.warn(
      fields,
      "the source's total counts more bookings than its pages serve where the mirror falls short; nothing more to read",
    );
  else if (report.end === "repaired")
    deps.logger.warn(fields, "repair: the mirror lacked bookings the source serves; stored them");
  return report;
}

function listPorts(store: SyncStore): FullSyncStore | undefined {
  const s = store as Partial<FullSyncStore>;
  const has = [
    s.commitDetailBatch,
    s.bookingsNeedingDetails,
    s.readProgress,
    s.countBookings,
    s.recordDrift,
    s.countAccounted,
    s.absentIds,
  ];
  return has.every((f) => typeof f === "function") ? (store as FullSyncStore) : undefined;
}

function joinNote(message: string | null, ties: string[]): string {
  const note = `feed tie overflow at ${ties.join(", ")}`;
  return message ? `${message}; ${note}` : note;
}

function logRun(logger: SyncDeps["logger"], r: SyncReport): void {
  const fields = {
    ...runLogFields(r),
    stream: r.stream,
    checkpoint: r.checkpointAfter,
    ...(r.tiesRead.length ? { tiesRead: r.tiesRead.length } : {}),
    ...(r.tieOverflows.length ? { tieOverflows: r.tieOverflows } : {}),
    ...(r.details
      ? { detailsFound: r.details.found, detailsWanted: r.details.wanted, detailsEnd: r.details.end }
      : {}),
    ...(r.drift ? { sourceTotal: r.drift.sourceTotal, localTotal: r.drift.localTotal } : {}),
    ...(r.repair?.gaps ? { gapsFound: r.repair.gaps, repaired: r.repair.repaired } : {}),
  };
  if (r.status === "success") logger.info(fields, "sync finished");
  else if (r.status === "aborted")
    logger.warn(fields, "sync stopped before it finished; the next run resumes");
  else logger.error({ ...fields, err: r.error }, `sync failed: ${r.error?.message}`);
}
