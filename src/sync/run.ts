/**
 * What every run does around its work: record its start in `sync_runs`, tell a stop from a failure,
 * and record how it ended once everything it saved is durable. A caller starts the run, does its
 * work, and ends the run with what the work threw: the work is read where it is written.
 */
import { coerceError, findCause, isAbortError, PagesLost } from "../errors.js";
import { countFailedAttempts } from "./counters.js";
import type { Awaitable, Logger, RunCounters, RunFinish, RunStart, SyncDeps, SyncStore } from "./ports.js";

type RunStore = SyncDeps<Pick<SyncStore, "startRun" | "finishRun" | "flush">>;

/** A run recorded as started. */
export interface StartedRun {
  id: number;
  /** When it started (ISO). */
  startedAt: string;
}

/** How a run's work went, as `endRun` records it. */
export interface RunOutcome extends Partial<Pick<RunFinish, "gapsFound" | "repaired">> {
  /** The run's counters, which the work added to. */
  counters: RunCounters;
  /** What the work threw; undefined when it succeeded. */
  failure: unknown;
  /**
   * Reads the stream's checkpoint once the saved pages are durable (or lost): what the store holds,
   * never a page's claim that a failed commit took back; default none.
   */
  checkpointAfter?: (() => Awaitable<string | null>) | undefined;
  /** What the run let pass, recorded after the error: a tie run it could not read, a quirk weighed. */
  notes?: readonly string[] | undefined;
}

/** How a run ended. */
export interface RunEnd {
  runId: number;
  status: RunFinish["status"];
  /** Why the run failed or stopped; undefined on success. */
  error?: Error | undefined;
  checkpointAfter: string | null;
  startedAt: string;
  finishedAt: string;
  durationMs: number;
}

/** Records the start of a run. */
export async function startRun(deps: RunStore, run: Omit<RunStart, "startedAt">): Promise<StartedRun> {
  const { kind, stream, checkpointBefore } = run;
  const startedAt = deps.clock.now().toISOString();
  return { id: await deps.store.startRun({ kind, stream, checkpointBefore, startedAt }), startedAt };
}

/** Records how a run ended, once what it saved (even a failed run's, to resume from) is durable. */
export async function endRun(deps: RunStore, run: StartedRun, outcome: RunOutcome): Promise<RunEnd> {
  const { store, clock } = deps;
  const { counters, gapsFound, repaired } = outcome;
  let { failure } = outcome;
  if (failure !== undefined) countFailedAttempts(counters, failure);
  let flushed: unknown;
  try {
    await store.flush();
  } catch (err) {
    flushed = err;
    if (failure !== undefined)
      deps.logger.error({ err }, "the pages saved before the failure were not committed");
    failure ??= err;
  }
  // Pages counted as saved that a lost batch took back are not in the mirror: the next run reads
  // them. A store keeps its first loss of a run only, so this is each lost page once.
  const lost = (findCause(failure, PagesLost) ?? findCause(flushed, PagesLost))?.uncommitted;
  for (const key of ["inserted", "updated", "unchanged", "rejected"] as const)
    counters[key] = Math.max(0, counters[key] - (lost?.[key] ?? 0));
  const error = failure === undefined ? undefined : coerceError(failure);
  const status =
    error === undefined ? "success" : deps.signal.aborted && isAbortError(failure) ? "aborted" : "failed";
  // A stop is recorded with why it was asked for ("received SIGINT"), not the request it cut short.
  const recorded =
    status === "aborted" ? new Error(`stopped: ${stopReason(deps.signal)}`, { cause: error }) : error;
  const finishedAt = clock.now().toISOString();
  const checkpointAfter = (await outcome.checkpointAfter?.()) ?? null;
  const notes = [recorded?.message, ...(outcome.notes ?? [])].filter((n) => n !== undefined);
  await store.finishRun(run.id, {
    ...counters,
    status,
    finishedAt,
    checkpointAfter,
    error: notes.length ? notes.join("; ") : null,
    gapsFound,
    repaired,
  });
  const durationMs = Date.parse(finishedAt) - Date.parse(run.startedAt);
  return { runId: run.id, status, error, checkpointAfter, startedAt: run.startedAt, finishedAt, durationMs };
}

/** What each kind's end says when it stopped, and when it failed. */
const SAID = {
  sync: { stopped: "the next run resumes", failed: "sync failed" },
  backfill: { stopped: "run it again to resume", failed: "backfill failed" },
  reconcile: {
    stopped: "nothing was marked missing",
    failed: "reconcile failed (nothing was marked missing)",
  },
} as const;

/** Logs how a run ended, with its counters and `fields`; a `note` makes a success a warning. */
export function logEnd(
  logger: Logger,
  kind: keyof typeof SAID,
  r: RunCounters & Pick<RunEnd, "runId" | "status" | "error" | "durationMs">,
  fields: object,
  note?: string,
): void {
  const { runId, status, inserted, updated, unchanged, rejected, pages, requests, retries, durationMs } = r;
  const counts = { unchanged, rejected, pages, requests, retries, durationMs };
  const all = { runId, status, new: inserted, updated, ...counts, ...fields };
  if (status === "success") logger[note ? "warn" : "info"](all, `${kind} finished${note ?? ""}`);
  else if (status === "aborted")
    logger.warn(all, `${kind} stopped before it finished; ${SAID[kind].stopped}`);
  else logger.error({ ...all, err: r.error }, `${SAID[kind].failed}: ${r.error?.message}`);
}

/** Why the work was asked to stop, in the words of whoever aborted it. */
function stopReason(signal: AbortSignal): string {
  const reason: unknown = signal.reason;
  return reason instanceof Error ? reason.message : typeof reason === "string" ? reason : "asked to stop";
}
