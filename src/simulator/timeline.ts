/** createdAt as a pure function of the index: runs of `tieRun` bookings, `spacingMs` apart. */
export interface TimelineOptions {
  /** Consecutive bookings sharing one createdAt (>= 1). */
  tieRun: number;
  /** Milliseconds between consecutive createdAt values (>= 0). */
  spacingMs: number;
  /** createdAt of booking 0, epoch ms. */
  epochMs: number;
  /** Overrides the formula (epoch ms); must be non-decreasing in i. */
  createdAtOf?: ((i: number) => number) | undefined;
}

/** The createdAt of every booking index; the caller validates the numbers it passes in. */
export class Timeline {
  /** `tieRun` and `spacingMs` may change (`Dataset.setTiming`): a test re-times a data set before anything reads it. */
  constructor(readonly options: TimelineOptions) {}

  /** createdAt of booking i, epoch ms. */
  createdAtMs(i: number): number {
    const { createdAtOf, epochMs, tieRun, spacingMs } = this.options;
    return createdAtOf ? createdAtOf(i) : epochMs + Math.floor(i / tieRun) * spacingMs;
  }

  /** How many of the first `size` indexes have createdAt before the cursor (`<` exclusive, `<=` inclusive): a binary search. */
  countBefore(cursorMs: number, inclusive: boolean, size: number): number {
    let lo = 0;
    let hi = size;
    while (lo < hi) {
      const mid = Math.floor((lo + hi) / 2);
      const t = this.createdAtMs(mid);
      if (inclusive ? t <= cursorMs : t < cursorMs) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** The order "newest first = highest index first" needs createdAt non-decreasing in i. */
  checkMonotone(from: number, to: number): void {
    if (!this.options.createdAtOf) return;
    for (let i = from + 1; i < to; i++) {
      if (this.createdAtMs(i) < this.createdAtMs(i - 1)) {
        throw new RangeError(
          `createdAtOf must be non-decreasing, but createdAtOf(${i}) < createdAtOf(${i - 1})`,
        );
      }
    }
  }
}
