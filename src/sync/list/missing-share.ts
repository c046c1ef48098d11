/**
 * The rule that keeps one reconcile from marking much of the mirror missing by accident (another
 * source, a source that answers a short list for a while): past a share of the bookings it judges,
 * the marks wait for a person (`reconcile --apply-missing`), recorded in `sync_state` until then.
 */
import type { SyncDeps, SyncStore } from "../ports.js";
import { saveProgress } from "../records.js";

/** RECONCILE_MAX_MISSING_SHARE's default, percent: see README, Configuration. */
export const DEFAULT_MAX_MISSING_PERCENT = 10;

/** The `sync_state` stream that holds the withheld marks (`WithheldMarks`), cleared once decided. */
export const WITHHELD_STREAM = "reconcile:withheld";

/** Missing marks a reconcile withheld because they passed the share. */
export interface WithheldMarks {
  /** Bookings the pass would have marked missing. */
  count: number;
  /** Bookings it judged: those in its window the mirror held, not marked, before it began. */
  judged: number;
  /** The share it may mark, percent. */
  maxPercent: number;
  /** The reconcile run that withheld them. */
  runId: number;
  /** When (ISO). */
  at: string;
  /** The pass's window start (ISO); null for the whole mirror. */
  since: string | null;
}

/** Whether marking `unlisted` of `judged` bookings passes `maxPercent` per cent of them. */
export function withholds(unlisted: number, judged: number, maxPercent: number): boolean {
  return unlisted > 0 && unlisted * 100 > maxPercent * judged;
}

/** `count` as a share of `judged`, for people: "100%", "12.5%", "0.1%". */
export function percentOf(count: number, judged: number): string {
  if (judged <= 0) return "0%";
  return `${Number(((count * 100) / judged).toPrecision(3))}%`;
}

/** One sentence: what was withheld and what decides it. */
export function withheldText(w: WithheldMarks): string {
  return (
    `${w.count} of ${w.judged} bookings (${percentOf(w.count, w.judged)}) would be marked missing, ` +
    `more than RECONCILE_MAX_MISSING_SHARE ${w.maxPercent}%: the marks are withheld (run ${w.runId}, ${w.at})`
  );
}

/** Whether a pass over `since` judged everything a pass over `withheldSince` did. */
function covers(since: string | null, withheldSince: string | null): boolean {
  return since === null || (withheldSince !== null && since <= withheldSince);
}

/**
 * Records the pass's outcome: its withheld marks, or, when it judged all the withheld pass did and
 * withheld nothing, that the decision is made. Saved beside the pass's pages.
 */
export async function recordWithheld(
  deps: SyncDeps<Pick<SyncStore, "readProgress" | "save">>,
  withheld: WithheldMarks | null,
  since: string | null,
): Promise<void> {
  if (withheld === null) {
    const { progress: before } = await deps.store.readProgress<WithheldMarks>(WITHHELD_STREAM);
    if (before === null || !covers(since, before.since)) return;
  }
  const progress = { stream: WITHHELD_STREAM, value: withheld };
  await saveProgress(deps.store, progress, deps.clock.now().toISOString());
}
