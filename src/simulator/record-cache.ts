/**
 * Serialized bookings (JSON as UTF-8), so a page served again skips generating and stringifying, as
 * the simulator shares its machine with the worker under test. An entry is reused only for the same
 * version and times, so mutations need no invalidation; slabs spare the GC a Buffer per record.
 */

/** The two shapes a booking is served in: list pages (full) and feed pages (summary). */
export type RecordView = "full" | "summary";

/** What booking i's JSON was made from, besides the data set's seed. */
export interface RecordStamp {
  version: number;
  createdAtMs: number;
  /** Undefined for a booking never updated. */
  updatedAtMs: number | undefined;
}

interface Entry extends RecordStamp {
  slab: Buffer;
  start: number;
  end: number;
}

/** Default budget: enough for the benchmark data set's full and summary records (docs/performance.md). */
export const DEFAULT_RECORD_CACHE_BYTES = 96 * 2 ** 20;

const SLAB_BYTES = 2 ** 20;

export class RecordCache {
  readonly #budgetBytes: number;
  /** Bytes of slabs allocated so far, at most the budget. */
  #allocated = 0;
  /** The slab being filled, and how much of it is used. */
  #slab: Buffer | undefined;
  #used = 0;
  readonly #entries: Record<RecordView, Map<number, Entry>> = { full: new Map(), summary: new Map() };

  /** @param budgetBytes most bytes of slabs held; 0 disables caching */
  constructor(budgetBytes: number) {
    this.#budgetBytes = budgetBytes;
  }

  /** Bytes of slabs allocated (the cache's memory, give or take its index). */
  get bytes(): number {
    return this.#allocated;
  }

  /**
   * Booking i's JSON in `view`: cached when made from `stamp`, else `make()`, kept while the budget
   * lasts. No eviction: on walks larger than the cache, evicting the oldest would never hit.
   */
  json(view: RecordView, i: number, stamp: RecordStamp, make: () => string): Buffer {
    const entries = this.#entries[view];
    const entry = entries.get(i);
    if (entry !== undefined) {
      if (
        entry.version === stamp.version &&
        entry.createdAtMs === stamp.createdAtMs &&
        entry.updatedAtMs === stamp.updatedAtMs
      ) {
        return entry.slab.subarray(entry.start, entry.end);
      }
      // Its bytes stay in the slab, unused: mutations are rare next to reads.
      entries.delete(i);
    }
    const text = make();
    const slab = this.#slabFor(text);
    if (slab === undefined) return Buffer.from(text);
    const start = this.#used;
    this.#used += slab.write(text, start);
    const { version, createdAtMs, updatedAtMs } = stamp;
    entries.set(i, { version, createdAtMs, updatedAtMs, slab, start, end: this.#used });
    return slab.subarray(start, this.#used);
  }

  /** A slab with room for `text` as UTF-8, or undefined when the budget is spent. */
  #slabFor(text: string): Buffer | undefined {
    // A UTF-16 code unit takes at most 3 bytes in UTF-8, so this much room always suffices.
    const room = text.length * 3;
    if (this.#slab !== undefined && this.#used + room <= this.#slab.length) return this.#slab;
    const size = Math.min(SLAB_BYTES, this.#budgetBytes - this.#allocated);
    if (room > size) return undefined;
    this.#slab = Buffer.allocUnsafe(size);
    this.#allocated += size;
    this.#used = 0;
    return this.#slab;
  }
}
