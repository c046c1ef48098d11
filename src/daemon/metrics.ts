/** The daemon's Prometheus metrics, on a registry of their own so daemons in one process share none. */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import type { RequestEvent } from "../api/observe.js";
import type { Awaitable, Clock, RunCounters, RunKind } from "../sync/ports.js";
import type { RunEnd } from "../sync/run.js";
import { defineEventMetrics, type ReadEvents } from "./events-metrics.js";

/** Every metric name starts with this, process metrics included. */
export const METRIC_PREFIX = "booking_sync_";

/** The fields of a run's report the metrics read; `stream` labels checkpoint lag (default "all"). */
export type RunReport = Pick<RunEnd, "status" | "durationMs" | "finishedAt" | "checkpointAfter"> &
  Pick<RunCounters, "pages" | "inserted" | "updated" | "unchanged" | "rejected"> & {
    stream?: string | null | undefined;
  };

export interface MetricsOptions {
  /** Time for checkpoint lag; default the system clock. */
  clock?: Clock;
  /** Reads the stored checkpoints (stream → ISO or null) at scrape time; default those of recorded runs. */
  readCheckpoints?: () => Awaitable<Record<string, string | null>>;
  /** Reads the events stream's figures at scrape time; without it there are no events metrics. */
  readEvents?: ReadEvents;
  /** Collect process and Node.js metrics (CPU, memory, event loop); default true. */
  processMetrics?: boolean;
}

/** The daemon's metrics and what records them. */
export type Metrics = ReturnType<typeof createMetrics>;

/** Creates the registry and its metrics. */
export function createMetrics(options: MetricsOptions = {}) {
  const clock = options.clock ?? { now: () => new Date() };
  const registry = new Registry();
  const runCheckpoints: Record<string, string | null> = {};
  const m = defineMetrics(registry, () =>
    checkpointLagSeconds(options.readCheckpoints, runCheckpoints, clock.now()),
  );
  if (options.readEvents) defineEventMetrics(registry, METRIC_PREFIX, options.readEvents);
  if (options.processMetrics ?? true) collectDefaultMetrics({ register: registry, prefix: METRIC_PREFIX });

  return {
    /** Serve with `registry.metrics()` and `registry.contentType`. */
    registry,
    /** Counts a finished run of the given kind. */
    recordRun(report: RunReport, kind: RunKind = "sync"): void {
      m.runs.inc({ kind, status: report.status });
      m.bookings.inc({ change: "new" }, report.inserted);
      m.bookings.inc({ change: "updated" }, report.updated);
      m.bookings.inc({ change: "unchanged" }, report.unchanged);
      m.rejects.inc(report.rejected);
      m.pages.inc({ kind }, report.pages);
      m.runSeconds.observe({ kind }, report.durationMs / 1000);
      if (report.status === "success") m.lastSuccess.set({ kind }, Date.parse(report.finishedAt) / 1000);
      if (report.checkpointAfter !== null) runCheckpoints[report.stream ?? "all"] = report.checkpointAfter;
    },
    /** The API client's per-attempt hook. */
    onRequest(event: RequestEvent): void {
      const status = event.status === undefined ? "none" : String(event.status);
      m.requests.inc({ endpoint: event.endpoint, outcome: event.outcome, status });
      if (event.outcome === "retry") m.retries.inc({ endpoint: event.endpoint });
      m.requestSeconds.observe({ endpoint: event.endpoint }, event.durationMs / 1000);
    },
    /** Counts a schedule tick skipped because a run was in flight. */
    recordSkippedTick(): void {
      m.skippedTicks.inc();
    },
    /** The source's total (list-bookings `pagination.total`) against the local row count. */
    recordDrift(totals: { sourceTotal: number; localTotal: number }): void {
      m.sourceTotal.set(totals.sourceTotal);
      m.localTotal.set(totals.localTotal);
      m.drift.set(totals.sourceTotal - totals.localTotal);
    },
    /** What a repair did: gaps found in the mirror, and the bookings stored to fill them. */
    recordRepair(repair: { gaps: number; repaired: number }): void {
      m.gapsFound.inc(repair.gaps);
      m.repaired.inc(repair.repaired);
    },
    /** What a details pass read past without finding. */
    recordDetails(details: { missed: number }): void {
      m.detailsNotFound.inc(details.missed);
    },
  };
}

/** Declares every metric on `registry`; `lags` yields checkpoint lag per stream at scrape time. */
function defineMetrics(registry: Registry, lags: () => Promise<Record<string, number>>) {
  const registers = [registry];
  const name = (suffix: string) => `${METRIC_PREFIX}${suffix}`;
  const counter = <L extends string = never>(suffix: string, help: string, labelNames: readonly L[] = []) =>
    new Counter({ name: name(suffix), help, labelNames, registers });
  const gauge = <L extends string = never>(suffix: string, help: string, labelNames: readonly L[] = []) =>
    new Gauge({ name: name(suffix), help, labelNames, registers });
  const histogram = <L extends string>(
    suffix: string,
    help: string,
    labelNames: readonly L[],
    buckets: number[],
  ) => new Histogram({ name: name(suffix), help, labelNames, buckets, registers });
  return {
    runs: counter("runs_total", "Finished runs by kind and status (success, failed, aborted).", [
      "kind",
      "status",
    ]),
    bookings: counter(
      "bookings_total",
      "Bookings written by runs: change=new (inserted), updated, or unchanged (seen again as stored).",
      ["change"],
    ),
    rejects: counter("rejected_total", "Malformed records quarantined instead of stored."),
    pages: counter("pages_total", "API pages read by runs, by kind.", ["kind"]),
    requests: counter(
      "requests_total",
      "HTTP attempts to the partner API by endpoint, outcome (ok, retry, error) and status (none without a response).",
      ["endpoint", "outcome", "status"],
    ),
    retries: counter("retries_total", "Failed attempts to the partner API that were retried, by endpoint.", [
      "endpoint",
    ]),
    requestSeconds: histogram(
      "request_duration_seconds",
      "Duration of one HTTP attempt to the partner API, by endpoint.",
      ["endpoint"],
      [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    ),
    runSeconds: histogram(
      "run_duration_seconds",
      "Duration of finished runs, by kind.",
      ["kind"],
      [0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900, 1800],
    ),
    lastSuccess: gauge(
      "last_success_timestamp_seconds",
      "Unix time (seconds) the last successful run of each kind finished.",
      ["kind"],
    ),
    skippedTicks: counter(
      "skipped_ticks_total",
      "Schedule ticks skipped because the previous run was still in progress.",
    ),
    checkpointLag: new Gauge({
      name: name("checkpoint_lag_seconds"),
      help: "Seconds between now and each stream's checkpoint (newest booking known to be fully mirrored); absent before the first.",
      labelNames: ["stream"] as const,
      registers,
      async collect() {
        const now = await lags();
        // Labelled so a stream without a checkpoint has no sample at all, rather than a reassuring 0.
        this.reset();
        for (const [stream, lag] of Object.entries(now)) this.set({ stream }, lag);
      },
    }),
    sourceTotal: gauge(
      "source_bookings",
      "Bookings the source reports in total (list-bookings pagination.total), at the last check.",
    ),
    localTotal: gauge("local_bookings", "Bookings in the local mirror, at the last drift check."),
    drift: gauge(
      "drift_bookings",
      "Source total minus local count at the last check; positive means the mirror is missing bookings.",
    ),
    gapsFound: counter(
      "gaps_found_total",
      "Gaps the repair found by position in the mirror: bookings a pass had missed.",
    ),
    repaired: counter("bookings_repaired_total", "Bookings the repair stored to fill those gaps."),
    detailsNotFound: counter(
      "details_not_found_total",
      "Bookings a details pass read list-bookings past without finding (deleted at the source?), each put off before it is sought again.",
    ),
  };
}

/** now − checkpoint in seconds per stream; streams without a (readable) checkpoint are left out. */
async function checkpointLagSeconds(
  read: (() => Awaitable<Record<string, string | null>>) | undefined,
  fallback: Record<string, string | null>,
  now: Date,
): Promise<Record<string, number>> {
  let checkpoints = fallback;
  if (read) {
    try {
      checkpoints = await read();
    } catch {
      // A scrape must not fail because the database is closing; the lag is simply absent.
      return {};
    }
  }
  const lags: Record<string, number> = {};
  for (const [stream, checkpoint] of Object.entries(checkpoints)) {
    const at = checkpoint === null ? Number.NaN : Date.parse(checkpoint);
    if (!Number.isNaN(at)) lags[stream] = (now.getTime() - at) / 1000;
  }
  return lags;
}
