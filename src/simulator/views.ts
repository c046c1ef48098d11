/**
 * Position indexes over booking indexes. createdAt is non-decreasing in the index, so a filter needs
 * only the ascending list of matching indexes to answer any page with a binary search.
 */
import { bookingTypeOf, SOURCE_PLATFORMS, sourcePlatformOf } from "./bookings.js";
import type { SimBookingType } from "./catalog.js";

/** Ascending booking indexes that match one filter. */
export interface IndexView {
  /** Makes the view cover indexes below `size` (bookings are only ever appended). */
  extendTo(size: number): void;
  /** How many matching indexes are below `k`. */
  countBelow(k: number): number;
  /** The matching index at ascending position `p` (0-based); `p` must be below `countBelow(size)`. */
  at(p: number): number;
  /** Whether index `i` matches the filter. */
  matches(i: number): boolean;
}

/** The unfiltered view: position p is index p. */
export function allView(): IndexView {
  let covered = 0;
  return {
    extendTo: (size) => {
      covered = Math.max(covered, size);
    },
    countBelow: (k) => Math.max(0, Math.min(k, covered)),
    at: (p) => p,
    matches: () => true,
  };
}

/** A view that matches nothing, for filter values no booking can have. */
export function emptyView(): IndexView {
  return { extendTo: () => {}, countBelow: () => 0, at: () => -1, matches: () => false };
}

/** The indexes where `predicate` holds, in a growable Int32Array computed lazily. */
export function filterView(predicate: (i: number) => boolean): IndexView {
  let data = new Int32Array(0);
  let length = 0;
  let covered = 0;
  const push = (i: number): void => {
    if (length === data.length) {
      const grown = new Int32Array(Math.max(1024, data.length * 2));
      grown.set(data);
      data = grown;
    }
    data[length++] = i;
  };
  const countBelow = (k: number): number => {
    let lo = 0;
    let hi = length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((data[mid] ?? 0) < k) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  return {
    extendTo: (size) => {
      for (; covered < size; covered++) if (predicate(covered)) push(covered);
    },
    countBelow,
    at: (p) => data[p] ?? -1,
    matches: predicate,
  };
}

/** Which bookings a query covers. Feed and list pages use one field; when both are set, `bookingType` picks the index. */
export interface BookingFilter {
  bookingType?: SimBookingType | undefined;
  sourcePlatform?: string | undefined;
}

/** The cache key of the view `makeView` builds for a filter. */
export function viewKey(filter: BookingFilter): string {
  if (filter.bookingType) return `type:${filter.bookingType}`;
  if (filter.sourcePlatform) return `platform:${filter.sourcePlatform}`;
  return "all";
}

/** The view of a feed filter (bookingType) or list filter (sourcePlatform); bookingType wins when both are set. */
export function makeView(seed: number, filter: BookingFilter): IndexView {
  const { bookingType, sourcePlatform } = filter;
  if (bookingType) return filterView((i) => bookingTypeOf(seed, i) === bookingType);
  if (sourcePlatform) {
    // Unknown platforms get no index, so arbitrary query strings cannot allocate memory.
    if (!(SOURCE_PLATFORMS as readonly string[]).includes(sourcePlatform)) return emptyView();
    return filterView((i) => sourcePlatformOf(seed, i) === sourcePlatform);
  }
  return allView();
}
