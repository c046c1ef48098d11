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
  /** Mutable so a test can re-time a data set before anything reads it. */
  tieRun: number;
  spacingMs: number;
  readonly #epochMs: number;
  readonly #createdAtOf: ((i: number) => number) | undefined;

  constructor(options: TimelineOptions) {
    this.tieRun = options.tieRun;
    this.spacingMs = options.spacingMs;
    this.#epochMs = options.epochMs;
    this.#createdAtOf = options.createdAtOf;
  }

  /** createdAt of booking i, epoch ms. */
  createdAtMs(i: number): number {
    return this.#createdAtOf
      ? this.#createdAtOf(i)
      : this.#epochMs + Math.floor(i / this.tieRun) * this.spacingMs;
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
    if (!this.#createdAtOf) return;
    for (let i = from + 1; i < to; i++) {
      if (this.createdAtMs(i) < this.createdAtMs(i - 1)) {
        throw new RangeError(
          `createdAtOf must be non-decreasing, but createdAtOf(${i}) < createdAtOf(${i - 1})`,
        );
      }
    }
  }
}
