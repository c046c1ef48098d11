/** What the parts of a fill share: its options, its state as saved, and its one way to save. */
import type { WalkOptions, WalkTotals } from "../feed/walk.js";
import type { Progress, SyncDeps } from "../ports.js";
import type { FillProgress } from "./progress.js";

export interface FillRun {
  /** Slices walked and pages read at once when the mirror is far behind (SYNC_CONCURRENCY); ≥ 1. */
  concurrency: number;
  /** Called after each page is saved: pages read, pages planned, bookings saved, when it should end. */
  onProgress?: ((event: FillEvent) => void) | undefined;
}

export interface FillEvent {
  pages: number;
  totalPages: number;
  /** Bookings this run saved (new, changed or seen again). */
  bookings: number;
  ratePerSec: number;
  etaSec: number | null;
}

/** The fill's shared state and its one way to save. */
export interface Filling {
  deps: SyncDeps;
  walk: WalkOptions;
  run: FillRun;
  /**
   * The state as saved with its page: it never holds a change whose page was not saved. A batch
   * lost before its commit takes its pages' progress with it, and the run ends there.
   */
  state: FillProgress;
  totals: WalkTotals;
  /**
   * Saves a page, in turn with every other: `change` makes the state after it (a copy), `write`
   * stores the page with that state as the stream's progress, and only once it is stored does the
   * state become it. A page whose save fails leaves the state as it was, for every later page too.
   */
  commit(
    change: (next: FillProgress) => void,
    write: (progress: Progress, next: FillProgress) => Promise<void>,
    page?: boolean,
  ): Promise<void>;
}
