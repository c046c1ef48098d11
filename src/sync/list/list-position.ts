/**
 * Where a walk of list-bookings stands, as a pure value. Inserts only push bookings down (re-read,
 * never skipped); when `pagination.total` drops by k, at most k slid up past us, so we step back k.
 */

/** A walk's position in the list's current coordinates (0 = the newest booking). */
export interface ListPosition {
  /** Positions from the top known to be read, as of `total`. */
  covered: number;
  /** `pagination.total` at the last read; null before the first. */
  total: number | null;
}

/** One page as the walk read it. */
export interface ListRead {
  /** The 1-based page number asked for. */
  page: number;
  pageSize: number;
  /** `pagination.total` of the answer. */
  total: number;
  /** Records on the page, valid or not. */
  count: number;
}

export interface ListStep {
  position: ListPosition;
  /** The page joined the covered prefix (no gap above it), so decisions may rest on it. */
  contiguous: boolean;
  /** How far the total dropped since the previous read (0 when it did not). */
  shrunkBy: number;
}

export const START: ListPosition = { covered: 0, total: null };

/** The page to read next: the one holding the first position not yet covered. */
export function pageFor(position: ListPosition, pageSize: number): number {
  return Math.floor(position.covered / pageSize) + 1;
}

/** Applies a page read to the position. Pure: same position and read, same step. */
export function applyRead(position: ListPosition, read: ListRead): ListStep {
  const shrunkBy = position.total !== null && read.total < position.total ? position.total - read.total : 0;
  let covered = Math.max(0, position.covered - shrunkBy);
  const start = (read.page - 1) * read.pageSize;
  const contiguous = start <= covered;
  if (contiguous) covered = Math.max(covered, start + read.count);
  return { position: { covered, total: read.total }, contiguous, shrunkBy };
}

/** Whether every booking the list holds has been read. */
export function atEnd(position: ListPosition): boolean {
  return position.total !== null && position.covered >= position.total;
}
