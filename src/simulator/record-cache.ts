/**
 * Serialized bookings (JSON as UTF-8 bytes), so a page served again writes its records' bytes as
 * they are instead of generating and stringifying each one: those two steps are most of a page's
 * CPU, and the simulator shares its machine with the worker it is measured against.
 *
 * An entry is only reused when it was made from the same version and times, which is all a booking
 * depends on besides (seed, i); a stale entry is dropped when next asked for, so mutations need no
 * invalidation. The bytes live in 1 MiB slabs rather than a Buffer per record, which would retain
 * more objects for the garbage collector to trace and more memory per booking.
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

/**
 * Default budget: every full and summary record of the 20,000-booking benchmark data set
 * (about 4 KB and 0.6 KB each) fits, so repeated walks over it are served from the cache.
 */
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
   * Booking i's JSON in `view`: the cached bytes when made from `stamp`, otherwise `make()` as
   * UTF-8, kept while the budget lasts. Slabs are only appended to, so once the budget is spent
   * bookings not yet cached (or changed since) are served uncached, while the cached ones keep
   * hitting: walks over more bookings than fit still hit on the part that does, where evicting the
   * oldest entry would drop each booking just before the next walk asks for it again.
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
