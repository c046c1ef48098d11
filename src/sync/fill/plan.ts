/**
 * Planning a fill: probe the list for the times that split the bookings to read into slices of
 * equal count, and estimate the pages the whole fill takes.
 */
import { coerceError, isTransient } from "../../errors.js";
import { timeAt } from "../list/positions.js";
import { runPool } from "../pool.js";
import type { RunCounters, SyncDeps } from "../ports.js";
import type { FillRun } from "./filling.js";
import { type FillProgress, newFill } from "./progress.js";
import { probePositions, sliceCount, slicesBetween } from "./slices.js";

export interface PlanInput extends Pick<FillRun, "concurrency"> {
  /** When the fill begins (ISO). */
  startedAt: string;
  /** Where the walk stops (an instant), or null for the whole feed. */
  floor: string | null;
  /** How many bookings lie above the floor, as far as is known: what the slices split. */
  behind: number;
  /** Bookings per page. */
  pageSize: number;
  /** Whether the fill reads details for what it fills (list-bookings pages over the same bookings). */
  details: boolean;
  /** The whole feed is asked for (`backfill`): its details are read however few bookings it holds. */
  whole?: boolean | undefined;
}

/** Plans a fill: one slice when the mirror is close behind, else slices bounded by probed times. */
export async function planFill(
  deps: SyncDeps,
  input: PlanInput,
  counters: RunCounters,
): Promise<FillProgress> {
  const { startedAt, floor, behind, pageSize } = input;
  const count = sliceCount(behind, pageSize, input.concurrency);
  const positions = count > 1 ? probePositions(behind, count) : [];
  const bounds: Array<string | null> = positions.map(() => null);
  const probe = async ([i, position]: [number, number]) => {
    bounds[i] = await boundAt(deps, position, counters);
  };
  await runPool(positions.entries(), input.concurrency, probe, deps.signal);
  const slices = slicesBetween(bounds, floor, startedAt);
  const parallel = slices.length > 1;
  // A mirror close behind takes its details from the everyday details pass, as always.
  const listPages = (parallel || input.whole) && input.details ? Math.ceil(behind / pageSize) + 1 : 0;
  if (parallel)
    deps.logger.info(
      { behind, slices: slices.length, detailsPages: listPages, floor },
      "the mirror is far behind the source: reading it in slices of time at once",
    );
  const details = listPages > 0 ? { pageSize, pages: listPages, read: [] } : null;
  const plannedPages = Math.ceil(behind / pageSize) + positions.length + listPages;
  return newFill(startedAt, { floor, slices, details, plannedPages });
}

/**
 * The full-precision createdAt of the booking at `position` (0-based, newest first), or of one of
 * the next few when its own cannot be read; null when none can, or the probe is not the page asked
 * for (the bound is left out: a quirk costs a slice's balance, never the run).
 */
async function boundAt(deps: SyncDeps, position: number, counters: RunCounters): Promise<string | null> {
  try {
    return (await timeAt(deps, position, counters)).at ?? null;
  } catch (err) {
    if (isTransient(err)) throw err;
    deps.logger.warn(
      { position, err: coerceError(err) },
      "fill: a probe could not be read; its bound is left out",
    );
    return null;
  }
}
