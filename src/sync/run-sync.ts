/**
 * One incremental sync run: the feed walk, the details pass (when asked), then a drift check, recorded
 * in `sync_runs`. Shared by the `sync` command and the daemon, so both behave the same.
 *
 * How a page flows from the API to SQL: `runSync` reads the stream's state once and starts the run
 * (run.ts); `syncStream` (fill/stream.ts) resumes the fill a run left, or plans one down to the
 * checkpoint; `runFill` (fill/fill.ts) walks its slices; `walkSlice` (feed/walk.ts) fetches a page,
 * hands it with its progress to the pure reducer `advance` (feed/advance.ts, on the verdict of
 * feed/window.ts) and switches on the action it returns; the fill then stores the page's rows and the
 * walk's progress in one `store.save`. `endRun` records how the run ended.
 */
import { coerceError, wrapError } from "../errors.js";
import { zeroCounters } from "./counters.js";
import { emptyTotals, streamName, type WalkOptions, type WalkTotals } from "./feed/walk.js";
import { type Behind, howFarBehind } from "./fill/behind.js";
import type { FillRun } from "./fill/filling.js";
import { sliceCount } from "./fill/slices.js";
import { syncStream } from "./fill/stream.js";
import { type DetailsReport, emptyDetailsReport, fillDetails } from "./list/details.js";
import { checkDrift, type Drift } from "./list/drift.js";
import { type RepairReport, repairMirror } from "./list/repair.js";
import type { FeedPage, StreamState, SyncDeps } from "./ports.js";
import { endRun, logEnd, type RunEnd, startRun } from "./run.js";

/**
 * The feed's scope (undefined syncs all bookings), page size and tie bound as the walk takes them;
 * concurrency (default 1) and progress as a fill takes them.
 */
export interface SyncOptions
  extends Pick<WalkOptions, "bookingType" | "pageSize" | "tieMaxPages">,
    Partial<FillRun> {
  /** Margin re-read below the checkpoint, seconds. */
  lookbackSeconds: number;
  /** After the walk, fill in details through list-bookings (details.ts); default false. */
  details?: boolean | undefined;
  /** list-bookings pages the details pass may read; default 50. */
  detailsMaxPages?: number | undefined;
}

export interface SyncReport extends WalkTotals, RunEnd {
  stream: string;
  checkpointBefore: string | null;
  /** The details pass's share of the counters, when it ran. */
  details?: DetailsReport | undefined;
  /** The drift check's totals, when it ran and succeeded. */
  drift?: Drift | undefined;
  /** What the repair did, when the drift check found the mirror short. */
  repair?: RepairReport | undefined;
}

/** Runs one sync. Never throws for a failed sync: the report says `failed` and carries the error. */
export async function runSync(deps: SyncDeps, options: SyncOptions): Promise<SyncReport> {
  const name = streamName(options.bookingType);
  // The stream's one read this run: the walk is handed it, and keeps its checkpoint current.
  const stream = await deps.store.readStream(name);
  const checkpointBefore = stream.checkpoint;
  const totals = emptyTotals();
  const run = await startRun(deps, { kind: "sync", stream: name, checkpointBefore });
  const extra: AfterWalk = {};
  let failure: unknown;
  try {
    const known = await walkStream(deps, options, stream, run.startedAt, totals);
    await afterWalk(deps, options, run.id, totals, known, extra);
    // The walk stepped past a run it could not read; only a repair that left no shortfall vouches for it.
    if (totals.tieOverflows.length > 0 && !(extra.repair && extra.repair.shortfall <= 0))
      throw new Error(
        `repair: a tie run at ${totals.tieOverflows.join(", ")} could not be read whole, and the repair could not show the mirror complete; the next run's repair goes on`,
      );
  } catch (err) {
    failure = err;
  }
  const { details, drift, repair } = extra;
  const end = await endRun(deps, run, {
    counters: totals,
    failure,
    checkpointAfter: async () => (await deps.store.readStream(name)).checkpoint,
    notes: runNotes(totals),
    gapsFound: repair?.gaps,
    repaired: repair?.repaired,
  });
  const report: SyncReport = { ...totals, ...end, stream: name, checkpointBefore, details, drift, repair };
  logRun(deps.logger, report);
  return report;
}

/**
 * The feed's newest page first (every walk reads it, and the source is judged by it: a run whose
 * first page cannot be read fails before it asks for anything else), how far behind the mirror is,
 * then the stream brought up to date.
 */
async function walkStream(
  deps: SyncDeps,
  options: SyncOptions,
  stream: StreamState,
  startedAt: string,
  totals: WalkTotals,
): Promise<Behind> {
  const { pageSize, bookingType, onProgress, concurrency = 1, details = false } = options;
  const lookbackMs = options.lookbackSeconds * 1000;
  const first = { limit: pageSize, bookingType };
  let newest: FeedPage | undefined = await deps.api.fetchRecent(first, deps.signal);
  const known = await howFarBehind(
    deps,
    { bookingType, checkpoint: stream.checkpoint, lookbackMs, newest },
    totals,
  );
  const run = { concurrency, onProgress, lookbackMs, startedAt, details, behind: known.behind };
  // The first walk from the newest booking takes the newest page instead of asking again, once.
  const head = () => {
    const page = newest;
    newest = undefined;
    return page;
  };
  const walk = { stream: stream.stream, bookingType, pageSize, tieMaxPages: options.tieMaxPages, head };
  await syncStream(deps, walk, run, stream, totals);
  return known;
}

// The run's booking counts stay the feed's, so "new" means new bookings; the details pass's own
// counts are in `report.details`. Its costs (and rejects) add to the run's.
const COUNTERS = ["pages", "requests", "retries", "rejected"] as const;

type AfterWalk = { details?: DetailsReport; drift?: Drift; repair?: RepairReport };

/**
 * The details pass (when asked), the drift check and the repair, each kept in `out` once done; their
 * costs add to `totals`. Throws when the details pass or the repair fails.
 */
async function afterWalk(
  deps: SyncDeps,
  options: SyncOptions,
  runId: number,
  totals: WalkTotals,
  known: Behind,
  out: AfterWalk,
): Promise<void> {
  if (options.details) {
    const details = emptyDetailsReport();
    out.details = details;
    try {
      const { pageSize, detailsMaxPages: maxPages, bookingType } = options;
      await fillDetails(deps, { pageSize, maxPages, bookingType }, details);
    } catch (err) {
      throw wrapError("details", err);
    } finally {
      for (const k of COUNTERS) totals[k] += details[k];
    }
  }
  // list-bookings cannot filter by booking type, so a typed stream has nothing to compare with.
  if (options.bookingType !== undefined || known.unread) return;
  try {
    // A total read before a fill of many minutes is stale by its end: the check reads it again.
    const parallel = sliceCount(known.behind, options.pageSize, options.concurrency ?? 1) > 1;
    out.drift = await checkDrift(deps, runId, totals, parallel ? undefined : known.sourceTotal);
  } catch (err) {
    deps.logger.warn({ err: coerceError(err) }, "drift check failed; the sync itself is not affected");
    return;
  }
  try {
    out.repair = await repairAfter(deps, options, out.drift.sourceTotal, totals);
  } catch (err) {
    throw wrapError("repair", err);
  }
}

/**
 * Repairs the mirror when the source holds more than it accounts for. A spent budget fails the run
 * (the next one goes on); a shortfall no page explains is only reported.
 */
async function repairAfter(
  deps: SyncDeps,
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
  if (report.end === "unplaced") {
    const warning = `the source's total counts ${report.shortfall} more bookings than its pages serve where the mirror falls short (records without a usable _id count there); nothing more to read`;
    totals.warnings.push(`repair: ${warning}`);
    deps.logger.warn(fields, warning);
  } else if (report.end === "repaired")
    deps.logger.warn(fields, "repair: the mirror lacked bookings the source serves; stored them");
  return report;
}

/**
 * What the source did that the run let pass (a tie run it could not read, a quirk weighed against
 * other evidence): recorded after the run's error, so a successful run with a warning says so.
 */
function runNotes(totals: WalkTotals): string[] {
  const overflow = totals.tieOverflows.length
    ? [`feed tie overflow at ${totals.tieOverflows.join(", ")}`]
    : [];
  return [...overflow, ...totals.warnings.map((w) => `warning: ${w}`)];
}

function logRun(logger: SyncDeps["logger"], r: SyncReport): void {
  const fields = {
    stream: r.stream,
    checkpoint: r.checkpointAfter,
    ...(r.tiesRead.length ? { tiesRead: r.tiesRead.length } : {}),
    ...(r.tieOverflows.length ? { tieOverflows: r.tieOverflows } : {}),
    ...(r.warnings.length ? { warnings: r.warnings } : {}),
    ...(r.details
      ? { detailsFound: r.details.found, detailsWanted: r.details.wanted, detailsEnd: r.details.end }
      : {}),
    ...(r.drift ? { sourceTotal: r.drift.sourceTotal, localTotal: r.drift.localTotal } : {}),
    ...(r.repair?.gaps ? { gapsFound: r.repair.gaps, repaired: r.repair.repaired } : {}),
  };
  logEnd(logger, "sync", r, fields);
}
