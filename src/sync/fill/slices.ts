/**
 * How a fill divides its work, as pure functions. The feed's cursor is a time, so a stretch
 * `[older, newer]` can be walked on its own; the bounds come verbatim from probed bookings, so an
 * insert or a delete while the slices are read moves no bound and nothing slides between two.
 */
import type { WalkProgress } from "../ports.js";
import type { PageRuns } from "./progress.js";

/**
 * Feed pages one slice holds at least: its probe stays a small share of the fill's requests, and a
 * mirror fewer than two slices behind is walked as one (the everyday sync: one request when idle).
 */
export const SLICE_MIN_PAGES = 10;

/** Slices per request in flight: enough that slices finishing early leave no slot idle for long. */
const SLICES_PER_SLOT = 2;

/** How many slices to walk `behind` bookings in: one below two slices' worth, at most 2 per slot. */
export function sliceCount(behind: number, pageSize: number, concurrency: number): number {
  const byCount = Math.floor(Math.max(0, behind) / (pageSize * SLICE_MIN_PAGES));
  return Math.max(1, Math.min(byCount, SLICES_PER_SLOT * Math.max(1, Math.floor(concurrency))));
}

/** The list positions (0-based, newest first) that split `count` bookings into `slices` equal parts. */
export function probePositions(count: number, slices: number): number[] {
  const out: number[] = [];
  for (let i = 1; i < slices; i++) {
    const position = Math.floor((i * count) / slices);
    if (position > (out.at(-1) ?? 0)) out.push(position);
  }
  return out;
}

/**
 * The slices between probed instants (newest first; null where no time could be read), down to
 * `floor`. A bound equal to or above the one before it, or at or below the floor, adds no slice: two
 * neighbours then share one. Adjacent slices overlap at their bound, so its ties are read by both.
 */
export function slicesBetween(
  bounds: readonly (string | null)[],
  floor: string | null,
  startedAt: string,
): WalkProgress[] {
  // Any distinct instants partition the range; one out of order costs its own slice's balance only.
  const valid = bounds.filter((b): b is string => b !== null && (floor === null || b > floor));
  const kept = [...new Set(valid)].sort((a, b) => (a < b ? 1 : a > b ? -1 : 0));
  const ceilings = [null, ...kept];
  return ceilings.map((ceiling, i) => ({
    startedAt,
    ceiling,
    floor: kept[i] ?? floor,
    upTo: ceiling,
    anchor: null,
    fallback: null,
    top: null,
    pages: 0,
  }));
}

/** `runs` with page `page` added, merged and sorted. */
export function addPage(runs: PageRuns, page: number): PageRuns {
  const all = [...runs, [page, page] as [number, number]].sort((a, b) => a[0] - b[0]);
  const out: PageRuns = [];
  for (const [from, to] of all) {
    const last = out.at(-1);
    if (last && from <= last[1] + 1) last[1] = Math.max(last[1], to);
    else out.push([from, to]);
  }
  return out;
}

/** The pages from 1 to `pages` that `runs` does not hold, ascending, lazily. */
export function* unreadPages(runs: PageRuns, pages: number): Generator<number> {
  let next = 1;
  for (const [from, to] of [...runs].sort((a, b) => a[0] - b[0])) {
    for (; next < from && next <= pages; next++) yield next;
    next = Math.max(next, to + 1);
  }
  for (; next <= pages; next++) yield next;
}
