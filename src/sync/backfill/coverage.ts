/**
 * Which bookings a backfill has read while the source changes, as pure functions. Positions are in
 * *start coordinates* (the list at total T0): a page p read at total T covered
 * [(p−1)·S − d, p·S − d) with d = T − T0. Uncovered positions are re-read at the current shift.
 */

/** Consecutive pages `from..to` (1-based, inclusive) read while `pagination.total` was `total`. */
export type PageRun = [from: number, to: number, total: number];

/** Half-open range of positions [start, end). */
export type Span = [start: number, end: number];

/** Records that `page` was read at `total`, merging it into an adjacent run with the same total. */
export function addRead(runs: readonly PageRun[], page: number, total: number): PageRun[] {
  const out = runs.map((r) => [...r] as PageRun);
  const before = out.find(([, to, t]) => t === total && to === page - 1);
  const after = out.find(([from, , t]) => t === total && from === page + 1);
  const inside = out.some(([from, to, t]) => t === total && from <= page && page <= to);
  if (inside) return out;
  if (before && after) {
    before[1] = after[1];
    out.splice(out.indexOf(after), 1);
  } else if (before) before[1] = page;
  else if (after) after[0] = page;
  else out.push([page, page, total]);
  return out.sort((a, b) => a[2] - b[2] || a[0] - b[0]);
}

/** How many distinct pages the runs hold. */
export function pagesRead(runs: readonly PageRun[]): number {
  const sorted = [...runs].sort((a, b) => a[0] - b[0]);
  let count = 0;
  let next = 1;
  for (const [from, to] of sorted) {
    const start = Math.max(from, next);
    if (to >= start) count += to - start + 1;
    next = Math.max(next, to + 1);
  }
  return count;
}

/** The start positions in [0, baseTotal) that no read covered, as sorted, disjoint spans. */
export function uncovered(runs: readonly PageRun[], pageSize: number, baseTotal: number): Span[] {
  const covered = runs
    .map(([from, to, total]): Span => {
      const shift = total - baseTotal;
      return [(from - 1) * pageSize - shift, to * pageSize - shift];
    })
    .sort((a, b) => a[0] - b[0]);
  const gaps: Span[] = [];
  let next = 0;
  for (const [start, end] of covered) {
    if (next >= baseTotal) break;
    if (start > next) gaps.push([next, Math.min(start, baseTotal)]);
    next = Math.max(next, end);
  }
  if (next < baseTotal) gaps.push([next, baseTotal]);
  return gaps;
}

/** How many positions the spans hold. */
export function spanSize(spans: readonly Span[]): number {
  return spans.reduce((n, [start, end]) => n + (end - start), 0);
}

/**
 * The pages covering `gaps` at the current `shift` (total − T0), ascending, lazily. `slack` extends
 * each gap down by that many positions, for bookings still arriving while the pages are read.
 */
export function* pagesFor(
  gaps: readonly Span[],
  pageSize: number,
  shift: number,
  slack = 0,
): Generator<number> {
  let last = 0;
  for (const [start, end] of gaps) {
    const first = Math.max(0, start + shift);
    const final = Math.max(first, end + shift + Math.max(0, slack) - 1);
    const to = Math.floor(final / pageSize) + 1;
    for (let p = Math.max(last + 1, Math.floor(first / pageSize) + 1); p <= to; p++) {
      last = p;
      yield p;
    }
  }
}

/** How many pages `pagesFor` yields for the same arguments, without listing them. */
export function countPages(gaps: readonly Span[], pageSize: number, shift: number, slack = 0): number {
  let last = 0;
  let count = 0;
  for (const [start, end] of gaps) {
    const first = Math.max(0, start + shift);
    const final = Math.max(first, end + shift + Math.max(0, slack) - 1);
    const from = Math.max(last + 1, Math.floor(first / pageSize) + 1);
    const to = Math.floor(final / pageSize) + 1;
    if (to >= from) {
      count += to - from + 1;
      last = to;
    }
  }
  return count;
}
