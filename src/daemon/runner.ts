/**
 * One scheduled run of the daemon under the writer lease, its outcome recorded in readiness and
 * metrics. A token the API keeps rejecting is the one failure that stops it: no later tick can fix it.
 */
import type { App } from "../app.js";
import { ApiError, findCause } from "../errors.js";
import type { WriterLease } from "../store/writer-lease.js";
import { type ReconcileReport, runReconcile } from "../sync/list/reconcile.js";
import { runSync, type SyncOptions, type SyncReport } from "../sync/run-sync.js";
import { SourceMismatchError } from "../sync/source.js";
import { errorText } from "./error-text.js";
import type { Health, HealthStatus } from "./health.js";
import type { Metrics } from "./metrics.js";
import type { RunReason } from "./scheduler.js";

export interface RunnerOptions {
  app: App;
  health: Pick<Health, "recordSuccess" | "recordFailure">;
  metrics: Pick<Metrics, "recordRun" | "recordDrift" | "recordRepair" | "recordDetails">;
  /** What every sync run does (the `sync` command's options, details included). */
  sync: SyncOptions;
  /** Bookings per list-bookings request of a reconcile run, 1–100. */
  reconcilePageSize: number;
  /** Most bookings a scheduled reconcile marks missing, percent of those it judges; default 10. */
  reconcileMaxMissingPercent?: number | undefined;
  /** Consecutive runs the API must reject the token on (HTTP 401/403) before `onFatal`. */
  maxAuthRejects: number;
  /** Called once when the daemon must stop by itself; the error says why. Must not await the run. */
  onFatal: (error: Error) => void;
  /** Told when the writer lease is taken (true) and lost or given up (false). */
  onLease?: ((held: boolean) => void) | undefined;
  /** Runs after each run under the lease, whatever its outcome; must not throw. */
  afterRun?: (() => Promise<void>) | undefined;
  /** Asks for a run again (the scheduler's `trigger`), every `LEASE_RETRY_MS`, while another worker holds the lease. */
  retry?: (() => void) | undefined;
}

/** A standby worker tries the lease this often: it takes over within this of the lease's release. */
export const LEASE_RETRY_MS = 2_000;

/** What one run came to; the scheduler passes it on as `run:end`'s result. */
export type RunOutcome =
  | { kind: "sync"; report: SyncReport }
  | { kind: "reconcile"; report: ReconcileReport }
  /** Another process holds the writer lease; nothing ran. */
  | { kind: "waiting"; reason: string }
  /** The daemon is stopping; nothing ran. */
  | { kind: "stopping" };

/** Creates the runner; it takes the writer lease on its first run. */
export function createRunner(options: RunnerOptions) {
  const { app, health, metrics } = options;
  const { logger, clock } = app;
  let lease: Extract<WriterLease, { acquired: true }> | undefined;
  let waitingFor: string | undefined;
  let current: AbortController | undefined;
  let stopping = false;
  let authRejects = 0;
  let cancelRetry: (() => void) | undefined;

  /** Stands by: says why (once, not at every retry) and asks for a run again soon. */
  const standBy = (why: string, fields: object): false => {
    if (waitingFor !== why) logger.warn(fields, `${why}; standing by`);
    waitingFor = why;
    if (options.retry && !stopping) {
      cancelRetry?.();
      cancelRetry = clock.setTimeout(options.retry, LEASE_RETRY_MS);
    }
    return false;
  };

  const ensureLease = async (): Promise<boolean> => {
    if (lease) return true;
    let taken: WriterLease;
    try {
      taken = await app.store.takeWriterLease({
        clock,
        logger,
        onLost: () => {
          // Another process took over, or the connection holding the lock was lost: stop writing,
          // and stand by until the lease can be taken again.
          lease = undefined;
          options.onLease?.(false);
          current?.abort(new Error("lost the writer lease"));
          standBy("lost the writer lease", {});
        },
      });
    } catch (err) {
      // The database is unreachable for now: the lease cannot be known, so nothing runs.
      return standBy("could not take the writer lease (the database did not answer)", { err });
    }
    if (!taken.acquired) {
      const h = taken.heldBy;
      const why = `waiting for the writer lease held by pid ${h.pid} on host ${h.hostname}`;
      return standBy(why, { holder: h.holder, expiresAt: h.expiresAt });
    }
    if (waitingFor !== undefined) logger.info({}, "took the writer lease; syncing");
    lease = taken;
    waitingFor = undefined;
    options.onLease?.(true);
    return true;
  };

  const noteAuth = (error: unknown): void => {
    // Another source than the mirror's: no later tick can fix it, and none may write.
    const refused = findCause(error, SourceMismatchError);
    const status = findCause(error, ApiError)?.status;
    if (refused) options.onFatal(refused);
    else if (status !== 401 && status !== 403) authRejects = 0;
    else if (++authRejects >= options.maxAuthRejects)
      options.onFatal(
        new Error(
          `the partner API rejected the token on ${authRejects} consecutive runs (${errorText(error)}); ` +
            "check BOOKING_API_TOKEN or BOOKING_API_TOKEN_FILE",
        ),
      );
  };

  const recordSync = (report: SyncReport): RunOutcome => {
    metrics.recordRun(report, "sync");
    if (report.drift) metrics.recordDrift(report.drift);
    if (report.repair) metrics.recordRepair(report.repair);
    if (report.details) metrics.recordDetails(report.details);
    const at = new Date(report.finishedAt);
    if (report.status === "success") {
      health.recordSuccess(at);
      authRejects = 0;
    } else if (report.status === "failed") {
      health.recordFailure(at, report.error ?? new Error("sync failed"), new Date(report.startedAt));
      noteAuth(report.error);
    }
    return { kind: "sync", report };
  };

  const recordReconcile = (report: ReconcileReport): RunOutcome => {
    // Readiness follows the feed sync only; a reconcile shows in runs_total{kind="reconcile"}.
    metrics.recordRun({ ...report, stream: "reconcile", checkpointAfter: null }, "reconcile");
    if (report.status === "success") authRejects = 0;
    else if (report.status === "failed") noteAuth(report.error);
    return { kind: "reconcile", report };
  };

  /** The scheduler's `runOnce`. Rejects only for a fault outside the sync (e.g. the database). */
  const runOnce = async (reason: RunReason): Promise<RunOutcome> => {
    if (stopping) return { kind: "stopping" };
    if (!(await ensureLease()))
      return { kind: "waiting", reason: waitingFor ?? "waiting for the writer lease" };
    const controller = new AbortController();
    current = controller;
    const deps = { ...app, signal: controller.signal };
    try {
      if (reason === "reconcile") {
        return recordReconcile(
          await runReconcile(deps, {
            since: null,
            pageSize: options.reconcilePageSize,
            bookingType: options.sync.bookingType,
            maxMissingPercent: options.reconcileMaxMissingPercent,
          }),
        );
      }
      return recordSync(await runSync(deps, options.sync));
    } catch (err) {
      health.recordFailure(clock.now(), err);
      throw err;
    } finally {
      current = undefined;
      // Only the lease holder prunes: a run that lost the lease leaves the stream to the new holder.
      if (lease) await options.afterRun?.();
    }
  };

  return {
    runOnce,
    /** Aborts the run in flight (the pages it saved commit with their progress) and refuses further runs. */
    abort(why: string): void {
      stopping = true;
      current?.abort(new Error(why));
    },
    /** Gives up the writer lease, if held, and stops trying to take it. */
    async releaseLease(): Promise<void> {
      cancelRetry?.();
      const held = lease;
      lease = undefined;
      if (held) options.onLease?.(false);
      await held?.release();
    },
    /** Readiness as the HTTP endpoint shows it: never ready while waiting for the lease. */
    status(status: HealthStatus): HealthStatus {
      return waitingFor === undefined ? status : { ...status, ready: false, reason: waitingFor };
    },
  };
}
