/**
 * What a list-bookings page must look like before anything is judged from it. Between pages, inserts
 * push at most as many bookings onto the next page as the total grew; more repeats, or a page starting
 * newer than the one before ends, means a page repeated or shifted.
 */
import type { ListPage } from "../ports.js";

/** What the walk keeps of the page it read before. */
export interface PageSeen {
  /** The 1-based page number. */
  page: number;
  total: number;
  ids: ReadonlySet<string>;
  /** Where its page ends (`endOf`: the newer of its last two times); null when none was readable. */
  last: string | null;
}

/** The page as the next check needs it. */
export function pageSeen(page: ListPage, number: number): PageSeen {
  const ids = new Set<string>();
  for (const r of page.records) if (r.id !== null) ids.add(r.id);
  return { page: number, total: page.total, ids, last: endOf(page) };
}

/** What is wrong with a page on its own: one line, or null. */
export function shapeProblem(asked: { page: number; pageSize: number }, page: ListPage): string | null {
  if (page.records.length > asked.pageSize)
    return `list-bookings page ${asked.page} held ${page.records.length} bookings, more than the ${asked.pageSize} asked (the source ignores pageSize)`;
  if (page.page !== asked.page)
    return `list-bookings answered page ${page.page} when asked for page ${asked.page}`;
  return null;
}

/** What is wrong with a page against the one read before it: one line, or null. */
export function sequenceProblem(
  asked: { page: number; pageSize: number },
  page: ListPage,
  before: PageSeen | undefined,
): string | null {
  const shape = shapeProblem(asked, page);
  if (shape !== null || before === undefined || before.page !== asked.page - 1 || page.total < before.total)
    return shape;
  let repeats = 0;
  for (const r of page.records) if (r.id !== null && before.ids.has(r.id)) repeats++;
  const grew = page.total - before.total;
  if (repeats > grew)
    return `list-bookings page ${asked.page} repeats ${repeats} bookings of page ${before.page} while the total grew by ${grew}`;
  // Bookings that inserts pushed down from the page before come first and may be newer than its
  // end: the order is judged from the first booking that page did not hold.
  const first =
    page.records.find((r) => r.createdAt !== null && !(r.id !== null && before.ids.has(r.id)))?.createdAt ??
    null;
  if (first !== null && before.last !== null && first > before.last)
    return `list-bookings page ${asked.page} starts newer than page ${before.page} ends (${first} after ${before.last}): its pages are not in creation order`;
  return null;
}

/**
 * Where a page ends, as far as its order vouches: the newer of its last two times, so one record
 * dated far off its place cannot end a walk, nor one without a time hold it up. Null when no record
 * has a time. The safe side for ending a walk; for the order check it lets an inversion across the
 * page boundary, one record deep, pass (a repeated or shifted page still shows by its ids).
 */
export function endOf(page: Pick<ListPage, "records">): string | null {
  let last: string | null = null;
  let before: string | null = null;
  for (const r of page.records) if (r.createdAt !== null) [before, last] = [last, r.createdAt];
  return before !== null && last !== null && before > last ? before : last;
}
