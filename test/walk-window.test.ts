import { describe, expect, it } from "vitest";
import {
  aboveFloorRun,
  cursorFor,
  justBefore,
  nextStep,
  type PageFacts,
  type Step,
} from "../src/sync/feed/window.js";
import { base, page, r, T } from "./support/window-facts.js";

/** Second `s`'s millisecond, as a tie run names it. */
const ms = (s: number) => `2026-01-01T00:00:${String(s).padStart(2, "0")}.000Z`;

describe("cursorFor", () => {
  it("asks for the newest page without a position", () => expect(cursorFor(null)).toBeUndefined());
  it("asks for the next whole millisecond after the position", () =>
    expect(cursorFor(T(5))).toBe("2026-01-01T00:00:05.001Z"));
  it("keeps sub-millisecond positions inside the request (never rounds down)", () =>
    expect(cursorFor(T(5, 999))).toBe("2026-01-01T00:00:05.001Z"));
});

describe("nextStep at a typed fill's slice bound", () => {
  it("a page that ends above the anchor owed, in a run below the floor, never ends the walk", () => {
    // More than a page of one millisecond above the anchor: the page can neither confirm nor refute it.
    const records = page(5, 4, 3, 2, 2);
    const step = nextStep({
      ...base,
      floor: T(6),
      limit: 5,
      records,
      count: 5,
      hasMore: true,
      confirmFloor: true,
      upTo: T(1, 500),
      anchor: { at: T(1, 500), ids: ["a"] },
    });
    expect(step).not.toEqual({ kind: "done", reason: "floor" });
  });
});

describe("nextStep", () => {
  const full = (records: ReturnType<typeof page>, extra: Partial<PageFacts> = {}) => ({
    records,
    count: records.length,
    hasMore: true,
    ...extra,
  });
  const cases: Array<[string, Partial<PageFacts>, Step]> = [
    ["an empty page ends the walk", { count: 0 }, { kind: "done", reason: "end" }],
    [
      "an empty page that claims more is refused (asked once more first)",
      { count: 0, hasMore: true },
      {
        kind: "refuse",
        retry: true,
        message: "the feed answered an empty page that claims more (hasMore: true)",
      },
    ],
    [
      "a short last page is asked past once (a server may cap the page and say hasMore: false)",
      { count: 2, records: page(9, 8) },
      {
        kind: "next",
        upTo: T(8),
        anchor: { at: T(8), ids: ["b1-8"] },
        fallback: { at: T(9), ids: ["b0-9"] },
      },
    ],
    [
      "a short page that brings nothing older than the position ends the walk",
      { count: 1, records: [r("b1-8", T(8))], upTo: T(8), anchor: { at: T(8), ids: ["b1-8"] } },
      { kind: "done", reason: "end" },
    ],
    [
      "the same after a page of another short count ends the walk",
      {
        count: 1,
        records: [r("b1-8", T(8))],
        upTo: T(8),
        anchor: { at: T(8), ids: ["b1-8"] },
        shortBefore: 2,
      },
      { kind: "done", reason: "end" },
    ],
    [
      // A server that caps its pages (hasMore: false on each) cut this one inside a run of one time,
      // or the run ends the feed: only the list can tell.
      "a short page of one time after a page as short is a tie run, read on the list and asked past",
      {
        count: 2,
        records: [r("t1", T(8)), r("t2", T(8))],
        upTo: T(8),
        anchor: { at: T(8), ids: ["t1", "t2"] },
        shortBefore: 2,
      },
      { kind: "tie", from: ms(8), to: ms(8), upTo: justBefore(ms(8)) },
    ],
    [
      "a short page newer than asked for, after one as short, is refused (asked once more first)",
      {
        count: 2,
        records: [r("n", T(9)), r("b1-8", T(8))],
        upTo: T(8),
        anchor: { at: T(8), ids: ["b1-8"] },
        shortBefore: 2,
      },
      {
        kind: "refuse",
        retry: true,
        message: `the feed answered cursor ${cursorFor(T(8))} with 2 records, none older than ${T(8)} (newest ${T(9)})`,
      },
    ],
    [
      "a quarantined record still confirms the anchor by its id",
      { count: 1, records: [], rejectIds: ["b1-8"], upTo: T(8), anchor: { at: T(8), ids: ["b1-8"] } },
      { kind: "done", reason: "end" },
    ],
    [
      "a full page moves to its last record, which the next page must serve again",
      full(page(9, 8, 7)),
      {
        kind: "next",
        upTo: T(7),
        anchor: { at: T(7), ids: ["b2-7"] },
        fallback: { at: T(8), ids: ["b1-8"] },
      },
    ],
    [
      "a record dated older than its neighbours mid-page moves nothing",
      full([r("a", T(9)), r("old", T(1)), r("b", T(8)), r("c", T(7))], { limit: 4 }),
      {
        kind: "next",
        upTo: T(7),
        anchor: { at: T(7), ids: ["c"] },
        fallback: { at: T(8), ids: ["b"] },
      },
    ],
    [
      "a last record dated newer than its place: the one before it ends the page",
      full([r("a", T(9)), r("b", T(7)), r("new", T(8))]),
      {
        kind: "next",
        upTo: T(7),
        anchor: { at: T(7), ids: ["b"] },
        fallback: { at: T(8), ids: ["new"] },
      },
    ],
    [
      "a page that does not serve the anchor again falls back to the next time up",
      full(page(5, 4, 3), {
        upTo: T(6),
        anchor: { at: T(6), ids: ["x"] },
        fallback: { at: T(7), ids: ["y"] },
      }),
      { kind: "fall-back", upTo: T(7), anchor: { at: T(7), ids: ["y"] }, missing: { at: T(6), ids: ["x"] } },
    ],
    [
      "without a fallback, an unconfirmed position fails the walk",
      full(page(5, 4, 3), { upTo: T(6), anchor: { at: T(6), ids: ["x"] } }),
      {
        kind: "refuse",
        retry: false,
        message: `the feed did not serve again the bookings at ${T(6)} (x) that its previous page ended with: its times or its order are inconsistent`,
      },
    ],
    [
      "stops once records agreeing with their neighbours lie below the floor",
      full(page(9, 4, 3), { floor: T(5) }),
      { kind: "done", reason: "floor" },
    ],
    [
      "a last record alone below the floor does not end the walk",
      full(page(9, 8, 4), { floor: T(5) }),
      {
        kind: "next",
        upTo: T(4),
        anchor: { at: T(4), ids: ["b2-4"] },
        fallback: { at: T(8), ids: ["b1-8"] },
      },
    ],
    [
      "records below the floor with a newer one after them are misdated, not the floor",
      full(page(9, 1, 1, 8), { floor: T(5), limit: 4 }),
      {
        kind: "next",
        upTo: T(1),
        anchor: { at: T(1), ids: ["b1-1", "b2-1"] },
        fallback: { at: T(8), ids: ["b3-8"] },
      },
    ],
    [
      "a run below the floor shorter than five at a page's end is read past, falling back above it: it may be misdated",
      full(page(12, 11, 10, 9, 8, 7, 6, 3, 2, 1), { floor: T(5), limit: 10 }),
      {
        kind: "next",
        upTo: T(1),
        anchor: { at: T(1), ids: ["b9-1"] },
        fallback: { at: T(6), ids: ["b6-6"] },
      },
    ],
    [
      "a run of five below the floor, in order, ends the walk",
      full(page(12, 11, 10, 9, 8, 5, 4, 3, 2, 1), { floor: T(6), limit: 10 }),
      { kind: "done", reason: "floor" },
    ],
    [
      "a run of five below a floor the mirror is complete below ends the walk when the mirror holds each",
      full(page(12, 11, 10, 9, 8, 5, 4, 3, 2, 1), {
        floor: T(6),
        limit: 10,
        held: new Set(["b5-5", "b6-4", "b7-3", "b8-2", "b9-1"]),
      }),
      { kind: "done", reason: "floor" },
    ],
    [
      "the same run with a booking the mirror lacks is read past: dated into the past, or created late",
      full(page(12, 11, 10, 9, 8, 5, 4, 3, 2, 1), {
        floor: T(6),
        limit: 10,
        held: new Set(["b5-5", "b6-4", "b7-3", "b8-2"]),
      }),
      {
        kind: "next",
        upTo: T(1),
        anchor: { at: T(1), ids: ["b9-1"] },
        fallback: { at: T(8), ids: ["b4-8"] },
      },
    ],
    [
      "at a typed fill's slice bound, a run below the floor does not end the walk on its own page",
      full(page(12, 11, 10, 9, 8, 5, 4, 3, 2, 1), { floor: T(6), limit: 10, confirmFloor: true }),
      {
        kind: "next",
        upTo: T(1),
        anchor: { at: T(1), ids: ["b9-1"] },
        fallback: { at: T(8), ids: ["b4-8"] },
      },
    ],
    [
      "there the next page, serving again the run's last booking below the floor, ends it",
      full([r("b9-1", T(1)), ...page(1, 1, 1, 1, 1).map((x, i) => ({ ...x, id: `c${i}` }))], {
        floor: T(6),
        limit: 6,
        confirmFloor: true,
        upTo: T(1),
        anchor: { at: T(1), ids: ["b9-1"] },
      }),
      { kind: "done", reason: "floor" },
    ],
    [
      "there a page that served again a booking above the floor, ending in a run below it, reads on",
      full([r("u10", T(10)), ...page(9, 8, 7, 5, 4, 3, 2, 1).map((x) => ({ ...x, id: `n${x.id}` }))], {
        floor: T(6),
        limit: 9,
        confirmFloor: true,
        upTo: T(10),
        anchor: { at: T(10), ids: ["u10"] },
      }),
      {
        kind: "next",
        upTo: T(1),
        anchor: { at: T(1), ids: ["nb7-1"] },
        fallback: { at: T(7), ids: ["nb2-7"] },
      },
    ],
    [
      "there a run misdated into the past is not served again from its time: the walk falls back",
      full(page(0, 0, 0), {
        floor: T(6),
        limit: 3,
        confirmFloor: true,
        upTo: T(1),
        anchor: { at: T(1), ids: ["b9-1"] },
        fallback: { at: T(8), ids: ["b4-8"] },
      }),
      {
        kind: "fall-back",
        upTo: T(8),
        anchor: { at: T(8), ids: ["b4-8"] },
        missing: { at: T(1), ids: ["b9-1"] },
      },
    ],
    [
      "a page wholly below the floor, in order, ends it",
      full(page(4, 3, 2, 1, 1), { floor: T(6), limit: 5 }),
      { kind: "done", reason: "floor" },
    ],
    [
      "a full page of one millisecond is a tie, read elsewhere, then stepped past",
      full([r("a", T(9, 900)), r("b", T(9, 500)), r("c", T(9, 100))], { upTo: T(9, 100) }),
      {
        kind: "tie",
        from: "2026-01-01T00:00:09.000Z",
        to: "2026-01-01T00:00:09.000Z",
        upTo: justBefore("2026-01-01T00:00:09.000Z"),
      },
    ],
    [
      "after a tie, an inclusive server's page of the tie's millisecond is a tie of two milliseconds",
      full(
        [r("a", T(9)), r("b", T(9)), r("c", T(9))].map((x) => ({ ...x, at: x.at })),
        { upTo: justBefore("2026-01-01T00:00:09.000Z") },
      ),
      {
        kind: "tie",
        from: "2026-01-01T00:00:08.999Z",
        to: "2026-01-01T00:00:09.000Z",
        upTo: justBefore("2026-01-01T00:00:08.999Z"),
      },
    ],
    [
      "microseconds are progress within a millisecond",
      full([r("a", T(9, 900)), r("b", T(9, 500)), r("c", T(9, 100))], { upTo: T(9, 950) }),
      {
        kind: "next",
        upTo: T(9, 100),
        anchor: { at: T(9, 100), ids: ["c"] },
        fallback: { at: T(9, 500), ids: ["b"] },
      },
    ],
    [
      "a server that ignores the cursor is refused, not looped",
      full(page(9, 8, 7), { upTo: T(5) }),
      {
        kind: "refuse",
        retry: true,
        message: `the feed answered cursor 2026-01-01T00:00:05.001Z with 3 records, none older than ${T(5)} (newest ${T(9)})`,
      },
    ],
    [
      "a full page of records without a valid time cannot move the walk (asked once more first)",
      { count: 3, records: [], hasMore: true },
      { kind: "refuse", retry: true, message: "the feed answered 3 records and none it can steer by" },
    ],
    [
      "asked twice, a page that claims more with nothing to steer by is an end only the list can confirm",
      { count: 3, records: [], hasMore: true, again: true, upTo: T(4), rejectReason: "_id: missing" },
      {
        kind: "end-unconfirmed",
        upTo: T(4),
        message: "the feed answered 3 records and none it can steer by (_id: missing)",
      },
    ],
    [
      "asked twice, an empty page that claims more is an end only the list can confirm (a quirk some sources repeat)",
      { count: 0, hasMore: true, again: true, upTo: T(4) },
      {
        kind: "end-unconfirmed",
        upTo: T(4),
        message: "the feed answered an empty page that claims more (hasMore: true)",
      },
    ],
    [
      "an empty page that claims more where an anchor is owed is no end, however often asked",
      { count: 0, hasMore: true, again: true, upTo: T(4), anchor: { at: T(4), ids: ["x"] } },
      {
        kind: "refuse",
        retry: true,
        message: "the feed answered an empty page that claims more (hasMore: true)",
      },
    ],
    [
      "a page only of rejects that serves the anchor again is no end: the walk starts over",
      {
        count: 2,
        hasMore: true,
        again: true,
        upTo: T(4),
        anchor: { at: T(4), ids: ["x"] },
        rejectIds: ["x"],
      },
      { kind: "refuse", retry: false, message: "the feed answered 2 records and none it can steer by" },
    ],
    [
      "a short page of records without a valid time ends the walk",
      { count: 2, records: [], hasMore: false },
      { kind: "done", reason: "end" },
    ],
  ];
  it.each(cases)("%s", (_name, facts, expected) => {
    expect(nextStep({ ...base, ...facts })).toEqual(expected);
  });
});

describe("aboveFloorRun: the top of the gap above a page's run below the floor", () => {
  // Floor at second 20; the run is what the page ends in below it, in order.
  it.each<[string, Array<{ id: string; at: string }>, string | null]>([
    ["the record before the run, on a page in time order", page(30, 25, 20, 9, 8, 7), T(20)],
    ["the nearest time above the run, not the page's order", page(25, 30, 9, 8, 7), T(25)],
    ["not a record before the run dated below it", [r("x", T(30)), r("m6", T(5)), ...page(9, 8, 7)], T(30)],
    [
      "not a record below the floor above the run, as misdated as it",
      [r("x", T(30)), r("k6", T(10)), r("r", T(25)), ...page(9, 8, 7)],
      T(25),
    ],
    ["none when the page serves nothing at or above the floor", page(9, 8, 7), null],
    ["none without a run", page(30, 25, 21), null],
  ])("%s", (_name, records, expected) => {
    expect(aboveFloorRun(records, T(20))).toBe(expected);
  });
});
