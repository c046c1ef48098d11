/** The simulator's ordered, mutable bookings: generated on demand, only the overlays are stored. */
import {
  fullBooking,
  type SimFullBooking,
  type SimSummaryBooking,
  sourcePlatformOf,
  summaryOf,
} from "./bookings.js";
import {
  DEFAULT_RECORD_CACHE_BYTES,
  RecordCache,
  type RecordStamp,
  type RecordView,
} from "./record-cache.js";
import { Timeline, type TimelineOptions } from "./timeline.js";
import { type BookingFilter, type IndexView, makeView, viewKey } from "./views.js";

/**
 * The timeline's defaults: `tieRun` 1, `spacingMs` 60,000, and an `epochMs` that puts the newest base
 * booking at `now()`, rounded down to the second.
 */
export interface DatasetOptions extends Partial<TimelineOptions> {
  /** Seed of the generated data; default 1. */
  seed?: number;
  /** Number of base bookings n (indexes 0..n-1, 0 = oldest); default 1000. */
  bookings?: number;
  /** Indexes invisible until `release` (late arrivals with an old createdAt). */
  hidden?: readonly number[];
  /** The clock (epoch ms): default epoch, update times and envelope timestamps; default `Date.now`. */
  now?: () => number;
  /** Most bytes of served JSON kept to answer repeated pages cheaply; default 96 MiB, 0 disables. */
  recordCacheBytes?: number;
}

export type { BookingFilter } from "./views.js";

export interface FeedSlice {
  /** Booking indexes, newest first. */
  indexes: number[];
  /** createdAt (epoch ms) of the last booking, or null when the page is empty. */
  nextCursorMs: number | null;
  /** Whether the query matched more bookings than the page holds. */
  hasMore: boolean;
}

/** Booking i (0 = oldest) of a seeded data set, its createdAt, its overlays, and the pages of both endpoints. */
export class Dataset {
  readonly seed: number;
  #size: number;
  readonly #timeline: Timeline;
  readonly #now: () => number;
  readonly #hidden = new Set<number>();
  readonly #removed = new Set<number>();
  readonly #updates = new Map<number, { version: number; updatedAtMs: number }>();
  readonly #views = new Map<string, IndexView>();
  readonly #excludedCache = new Map<string, { revision: number; positions: number[] }>();
  /** Bumped on every change of visibility, to invalidate cached exclusion positions. */
  #revision = 0;
  readonly #records: RecordCache;

  constructor(options: DatasetOptions = {}) {
    this.seed = options.seed ?? 1;
    this.#size = checkCount("bookings", options.bookings ?? 1000);
    const tieRun = checkCount("tieRun", options.tieRun ?? 1, 1);
    const spacingMs = checkCount("spacingMs", options.spacingMs ?? 60_000);
    this.#now = options.now ?? Date.now;
    const newestStep = Math.floor(Math.max(0, this.#size - 1) / tieRun);
    this.#timeline = new Timeline({
      tieRun,
      spacingMs,
      epochMs: options.epochMs ?? Math.floor(this.#now() / 1000) * 1000 - newestStep * spacingMs,
      createdAtOf: options.createdAtOf,
    });
    this.#timeline.checkMonotone(0, this.#size);
    for (const i of options.hidden ?? []) this.#hidden.add(i);
    this.#records = new RecordCache(
      checkCount("recordCacheBytes", options.recordCacheBytes ?? DEFAULT_RECORD_CACHE_BYTES),
    );
  }

  /** Number of bookings ever generated: base ones plus inserts (visible or not). */
  get size(): number {
    return this.#size;
  }

  /** createdAt of booking i, epoch ms. */
  createdAtMs(i: number): number {
    return this.#timeline.createdAtMs(i);
  }

  /** Changes the createdAt formula (tie tests); `_id`s change too, so call it before anything reads. */
  setTiming(timing: { tieRun?: number; spacingMs?: number }): void {
    const options = this.#timeline.options;
    if (timing.tieRun !== undefined) options.tieRun = checkCount("tieRun", timing.tieRun, 1);
    if (timing.spacingMs !== undefined) options.spacingMs = checkCount("spacingMs", timing.spacingMs);
  }

  /** Whether the source currently serves booking i. */
  isVisible(i: number): boolean {
    return i >= 0 && i < this.#size && !this.#hidden.has(i) && !this.#removed.has(i);
  }

  /** Booking i, full view, at its current version (whether visible or not). */
  full(i: number): SimFullBooking {
    const stamp = this.#stamp(i);
    return fullBooking(this.seed, i, stamp.version, stamp);
  }

  /** Booking i, summary view, at its current version. */
  summary(i: number): SimSummaryBooking {
    return summaryOf(this.full(i));
  }

  /** `JSON.stringify` of booking i in `view` as UTF-8, cached while its version and times stay the same. */
  json(view: RecordView, i: number): Buffer {
    const stamp = this.#stamp(i);
    return this.#records.json(view, i, stamp, () => {
      const full = fullBooking(this.seed, i, stamp.version, stamp);
      return JSON.stringify(view === "full" ? full : summaryOf(full));
    });
  }

  /** What booking i is generated from besides (seed, i): its version and times. */
  #stamp(i: number): RecordStamp {
    this.#checkIndex(i);
    const update = this.#updates.get(i);
    return {
      version: update?.version ?? 0,
      createdAtMs: this.createdAtMs(i),
      updatedAtMs: update?.updatedAtMs,
    };
  }

  /** Appends `count` new bookings (the newest), continuing the createdAt formula; returns their indexes. */
  insert(count: number): number[] {
    const first = this.#size;
    this.#size += checkCount("count", count);
    this.#timeline.checkMonotone(Math.max(0, first - 1), this.#size);
    this.#revision++;
    return Array.from({ length: count }, (_, k) => first + k);
  }

  /** Makes bookings invisible, as if not yet committed. */
  hide(indexes: readonly number[]): void {
    for (const i of indexes) this.#hidden.add(i);
    this.#revision++;
  }

  /** Makes hidden bookings visible: late arrivals with their old createdAt. */
  release(indexes: readonly number[]): void {
    for (const i of indexes) this.#hidden.delete(i);
    this.#revision++;
  }

  /** Bumps booking i's version; its updatedAt becomes now. Returns the new version. */
  update(i: number): number {
    this.#checkIndex(i);
    const version = (this.#updates.get(i)?.version ?? 0) + 1;
    this.#updates.set(i, { version, updatedAtMs: Math.max(this.#now(), this.createdAtMs(i)) });
    return version;
  }

  /** The source stops serving booking i. */
  remove(i: number): void {
    this.#checkIndex(i);
    this.#removed.add(i);
    this.#revision++;
  }

  /**
   * One feed page: visible bookings below the cursor (`<=` when inclusive), newest first; `hasMore`
   * as a server fetching `limit + 1` rows says. Ties at a page boundary behave as on real servers.
   */
  feed(
    query: { limit: number; cursorMs?: number | undefined; inclusive: boolean } & BookingFilter,
  ): FeedSlice {
    const view = this.#view(query);
    const below =
      query.cursorMs === undefined
        ? this.#size
        : this.#timeline.countBefore(query.cursorMs, query.inclusive, this.#size);
    const indexes = this.#takeDescending(view, view.countBelow(below) - 1, query.limit + 1);
    const hasMore = indexes.length > query.limit;
    if (hasMore) indexes.pop();
    const last = indexes.at(-1);
    return { indexes, nextCursorMs: last === undefined ? null : this.createdAtMs(last), hasMore };
  }

  /** One list page (1-based), newest first, and the total number of visible bookings matching the filter. */
  list(query: { page: number; pageSize: number } & BookingFilter): { indexes: number[]; total: number } {
    const view = this.#view(query);
    const excluded = this.#excludedPositions(view, viewKey(query));
    const total = view.countBelow(this.#size) - excluded.length;
    const offset = (query.page - 1) * query.pageSize;
    if (offset >= total) return { indexes: [], total };
    // Find the view position of the visible booking `offset` places from the newest.
    let position = total - 1 - offset;
    for (const q of excluded) {
      if (q > position) break;
      position++;
    }
    return { indexes: this.#takeDescending(view, position, query.pageSize), total };
  }

  /** Every visible booking index matching the filter (both fields may be set), newest first. */
  *visibleIndexes(filter: BookingFilter = {}): Generator<number> {
    const view = this.#view(filter);
    const platform = filter.bookingType ? filter.sourcePlatform : undefined;
    for (let p = view.countBelow(this.#size) - 1; p >= 0; p--) {
      const i = view.at(p);
      if (this.isVisible(i) && (!platform || sourcePlatformOf(this.seed, i) === platform)) yield i;
    }
  }

  /** Visible bookings from view position `from` downwards, at most `max`. */
  #takeDescending(view: IndexView, from: number, max: number): number[] {
    const out: number[] = [];
    for (let p = from; p >= 0 && out.length < max; p--) {
      const i = view.at(p);
      if (this.isVisible(i)) out.push(i);
    }
    return out;
  }

  #view(filter: BookingFilter): IndexView {
    const key = viewKey(filter);
    let view = this.#views.get(key);
    if (!view) {
      view = makeView(this.seed, filter);
      this.#views.set(key, view);
    }
    view.extendTo(this.#size);
    return view;
  }

  /** Ascending view positions of the hidden or removed bookings in the view; cached per revision. */
  #excludedPositions(view: IndexView, key: string): number[] {
    const cached = this.#excludedCache.get(key);
    if (cached?.revision === this.#revision) return cached.positions;
    const positions: number[] = [];
    for (const i of new Set([...this.#hidden, ...this.#removed])) {
      if (i >= 0 && i < this.#size && view.matches(i)) positions.push(view.countBelow(i));
    }
    positions.sort((a, b) => a - b);
    this.#excludedCache.set(key, { revision: this.#revision, positions });
    return positions;
  }

  #checkIndex(i: number): void {
    if (!Number.isInteger(i) || i < 0 || i >= this.#size) {
      throw new RangeError(`booking index ${i} is out of range 0..${this.#size - 1}`);
    }
  }
}

function checkCount(name: string, value: number, min = 0): number {
  if (!Number.isSafeInteger(value) || value < min) {
    throw new RangeError(`${name} must be an integer >= ${min}, got ${value}`);
  }
  return value;
}
