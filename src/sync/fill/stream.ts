/**
 * Brings one feed stream up to date, the one way every command does: finish the fill a run left
 * unfinished, then plan one down to the checkpoint (minus the lookback) and run it — one slice when
 * the mirror is close behind (the everyday sync), slices at once when it is far behind.
 */
import type { WalkOptions, WalkTotals } from "../feed/walk.js";
import { instantOf, shift } from "../feed/window.js";
import { sourceTotal } from "../list/drift.js";
import type { StreamState, SyncDeps, WalkProgress } from "../ports.js";
import { runFill } from "./fill.js";
import type { FillRun } from "./filling.js";
import { planFill } from "./plan.js";
import { type FillProgress, isFill, newFill, resumableProgress } from "./progress.js";

export interface StreamRun extends FillRun {
  /** Margin re-read below the checkpoint, ms. */
  lookbackMs: number;
  /** When the run began (ISO): a new fill's checkpoint never moves past it. */
  startedAt: string;
  /** Whether a fill reads details for what it fills. */
  details: boolean;
  /**
   * How many bookings the new fill has to read, as far as the caller knows (fill/behind.ts): two
   * slices' worth or more makes it parallel. `everything` reads the whole feed, checkpoint or not.
   */
  behind: number | "everything";
}

/**
 * Resumes an unfinished fill, then runs a new one, from `stream` as the run read it (its checkpoint
 * kept current as the fills move it). Throws when a page fails; what was read stays.
 */
export async function syncStream(
  deps: SyncDeps,
  walk: WalkOptions,
  run: StreamRun,
  stream: StreamState,
  totals: WalkTotals,
): Promise<void> {
  const saved = resumableProgress(stream.walk);
  if (stream.walk !== null && saved === null)
    deps.logger.warn(
      { stream: walk.stream },
      "the saved walk cannot be resumed (edited by hand, or written by another version): starting over from the checkpoint",
    );
  if (saved) {
    const state = resumable(saved);
    const left = { stream: walk.stream, slices: state.slices.length, pages: state.pages };
    deps.logger.info(left, "resuming the unfinished walk");
    await runFill(deps, walk, run, state, totals, stream);
    // A fill of the whole feed just ended: asking for everything is answered.
    if (run.behind === "everything" && state.floor === null) return;
  }
  const { checkpoint } = stream;
  const everything = run.behind === "everything";
  const floor = checkpoint && !everything ? instantOf(shift(checkpoint, -run.lookbackMs)) : null;
  const behind = run.behind === "everything" ? await sourceTotal(deps, totals) : run.behind;
  const { concurrency, details, startedAt } = run;
  const input = { startedAt, floor, behind, concurrency, details, whole: everything };
  const plan = await planFill(deps, { ...input, pageSize: walk.pageSize }, totals);
  await runFill(deps, walk, run, plan, totals, stream);
}

/** A saved fill, or a single walk an earlier version saved as one. */
function resumable(saved: FillProgress | WalkProgress): FillProgress {
  if (isFill(saved)) return saved;
  const { startedAt, floor, pages } = saved;
  return newFill(startedAt, { floor, slices: [saved], details: null, plannedPages: pages, pages });
}
