/**
 * What every run does around its work: record its start in `sync_runs`, tell a stop from a failure,
 * and record how it ended once everything it saved is durable.
 */
import { coerceError, isAbortError } from "../errors.js";
import { countFailedAttempts } from "./counters.js";
import type { Awaitable, RunCounters, RunFinish, RunKind, RunStatus, SyncDeps, SyncStore } from "./ports.js";

export interface RunSpec<C extends RunCounters> {
  kind: RunKind;
  stream: string | null;
  checkpointBefore: string | null;
  /** The run's counters, which `work` adds to as it goes. */
  counters: C;
  /** The checkpoint to record once the work is over; default none. */
  checkpointAfter?: () => Awaitable<string | null>;
  /** What else to record: a note beside the error, the repair's counts. */
  finish?: (ended: { status: RunEnd["status"]; error: Error | undefined }) => Partial<RunFinish>;
}

/** How a run ended. */
export interface RunEnd {
  runId: number;
  status: Exclude<RunStatus, "running">;
  /** Why the run failed or stopped; undefined on success. */
  error?: Error | undefined;
  checkpointAfter: string | null;
  startedAt: string;
  finishedAt: string;
  durationMs: number;
}

/** Runs `work` as a recorded run. Never throws for failed work: the result says so. */
export async function recordRun<C extends RunCounters>(
  deps: SyncDeps<Pick<SyncStore, "startRun" | "finishRun" | "flush">>,
  spec: RunSpec<C>,
  work: (runId: number, startedAt: string) => Promise<void>,
): Promise<RunEnd> {
  const { store, clock } = deps;
  const started = clock.now();
  const { kind, stream, checkpointBefore } = spec;
  const runId = await store.startRun({ kind, stream, startedAt: started.toISOString(), checkpointBefore });
  let status: RunEnd["status"] = "success";
  let error: Error | undefined;
  let failure: unknown;
  try {
    await work(runId, started.toISOString());
  } catch (err) {
    countFailedAttempts(spec.counters, err);
    failure = err;
  }
  try {
    // What the work saved (even a failed run's, from which the next one resumes) is durable first.
    await store.flush();
  } catch (err) {
    if (failure !== undefined)
      deps.logger.error({ err }, "the pages saved before the failure were not committed");
    failure ??= err;
  }
  if (failure !== undefined) {
    error = coerceError(failure);
    status = deps.signal.aborted && isAbortError(failure) ? "aborted" : "failed";
  }
  // A stop is recorded with why it was asked for ("received SIGINT"), not the request it cut short.
  const recorded =
    status === "aborted" ? new Error(`stopped: ${stopReason(deps.signal)}`, { cause: error }) : error;
  const finished = clock.now();
  const checkpointAfter = (await spec.checkpointAfter?.()) ?? null;
  await store.finishRun(runId, {
    ...spec.counters,
    status,
    finishedAt: finished.toISOString(),
    checkpointAfter,
    error: recorded?.message ?? null,
    ...spec.finish?.({ status, error: recorded }),
  });
  return {
    runId,
    status,
    error,
    checkpointAfter,
    startedAt: started.toISOString(),
    finishedAt: finished.toISOString(),
    durationMs: finished.getTime() - started.getTime(),
  };
}

/** Why the work was asked to stop, in the words of whoever aborted it. */
function stopReason(signal: AbortSignal): string {
  const reason: unknown = signal.reason;
  return reason instanceof Error ? reason.message : typeof reason === "string" ? reason : "asked to stop";
}
