import { describe, expect, it } from "vitest";
import { pageSeen, sequenceProblem } from "../src/sync/list/list-checks.js";
import type { ListPage } from "../src/sync/ports.js";

const T = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s)).toISOString();
/** A list page of bookings `b<second>` created at those seconds, newest first. */
const page = (number: number, total: number, secs: number[]): ListPage => ({
  records: secs.map((s) => ({ ok: false, id: `b${s}`, createdAt: T(s), reason: "", raw: null })),
  page: number,
  pageSize: 3,
  total,
  totalPages: Math.ceil(total / 3),
  attempts: 1,
});

describe("list page checks", () => {
  const p1 = pageSeen(page(1, 9, [9, 8, 7]), 1);
  const cases: Array<[string, ListPage, string | null]> = [
    ["the next page of an unchanged list is fine", page(2, 9, [6, 5, 4]), null],
    ["one repeat after one insert at the top is fine", page(2, 10, [7, 6, 5]), null],
    [
      "two repeats after two inserts, the first newer than page 1's end, are fine",
      page(2, 11, [8, 7, 6]),
      null,
    ],
    ["three inserts push the whole of page 1's end onto page 2: fine", page(2, 12, [9, 8, 7]), null],
    [
      "after the repeats, a booking newer than page 1's end",
      page(2, 11, [8, 7, 10]),
      `list-bookings page 2 starts newer than page 1 ends (${T(10)} after ${T(8)}): its pages are not in creation order`,
    ],
    [
      "a page longer than asked",
      page(2, 9, [6, 5, 4, 3]),
      "list-bookings page 2 held 4 bookings, more than the 3 asked (the source ignores pageSize)",
    ],
    [
      "a page numbered other than asked",
      page(1, 9, [6, 5, 4]),
      "list-bookings answered page 1 when asked for page 2",
    ],
    [
      "page 2 repeating page 1",
      page(2, 9, [9, 8, 7]),
      "list-bookings page 2 repeats 3 bookings of page 1 while the total grew by 0",
    ],
    [
      "a page that starts newer than the one before ends",
      page(2, 9, [10, 5, 4]),
      `list-bookings page 2 starts newer than page 1 ends (${T(10)} after ${T(8)}): its pages are not in creation order`,
    ],
    ["a record dated off its place mid-page decides nothing", page(2, 9, [6, 1, 5]), null],
    ["after the total dropped, only the shape is judged (the walk steps back)", page(2, 8, [9, 8, 7]), null],
  ];
  it.each(cases)("%s", (_name, next, problem) =>
    expect(sequenceProblem({ page: 2, pageSize: 3 }, next, p1)).toBe(problem),
  );
  it("ends page 1 by the newer of its last two times: one last record dated far below its place moves nothing", () => {
    const misdated = pageSeen(page(1, 9, [9, 8, 1]), 1);
    expect(misdated.last).toBe(T(8));
    expect(sequenceProblem({ page: 2, pageSize: 3 }, page(2, 9, [7, 6, 5]), misdated)).toBeNull();
  });
});
