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
  /** The createdAt its page ends with, by place (UTC, milliseconds); null when none was readable. */
  last: string | null;
}

/** The page as the next check needs it. */
export function pageSeen(page: ListPage, number: number): PageSeen {
  const ids = new Set<string>();
  let last: string | null = null;
  for (const r of page.records) {
    if (r.id !== null) ids.add(r.id);
    if (r.createdAt !== null) last = r.createdAt;
  }
  return { page: number, total: page.total, ids, last };
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
