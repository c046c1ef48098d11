import { describe, expect, it } from "vitest";
import { cursorFor, nextStep, type PageFacts } from "../src/sync/window.js";

const T = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s)).toISOString();
const base: PageFacts = {
  sentCursor: undefined,
  upTo: null,
  limit: 3,
  times: [],
  count: 0,
  hasMore: false,
  nextCursor: null,
  floor: null,
};

describe("cursorFor", () => {
  it("asks for the newest page without a position", () => expect(cursorFor(null, null)).toBeUndefined());
  it("asks 1 ms past the position while the rule is unknown", () =>
    expect(cursorFor(T(5), null)).toBe("2026-01-01T00:00:05.001Z"));
  it("asks at the position once the server is known inclusive", () =>
    expect(cursorFor(T(5), true)).toBe(T(5)));
});

describe("nextStep", () => {
  const cases: Array<[string, Partial<PageFacts>, ReturnType<typeof nextStep>]> = [
    ["empty page ends the walk", { count: 0 }, { kind: "done", reason: "empty" }],
    [
      "empty page with hasMore=true ends it, with a warning",
      { count: 0, hasMore: true },
      {
        kind: "done",
        reason: "empty",
        warn: "empty page with hasMore=true; treating it as the end of the feed",
      },
    ],
    ["short last page ends it", { count: 2, times: [T(9), T(8)] }, { kind: "done", reason: "end" }],
    [
      "a full last page is followed up (a tie run may continue past it)",
      { count: 3, times: [T(9), T(8), T(8)] },
      { kind: "next", upTo: T(8) },
    ],
    [
      "continues from the oldest time, not the last record (records out of order)",
      { count: 3, times: [T(7), T(9), T(8)], hasMore: true },
      { kind: "next", upTo: T(7) },
    ],
    [
      "stops once a page reaches below the floor",
      { count: 3, times: [T(9), T(8), T(4)], hasMore: true, floor: T(5) },
      { kind: "done", reason: "floor" },
    ],
    [
      "a page at the floor is not yet below it",
      { count: 3, times: [T(9), T(8), T(5)], hasMore: true, floor: T(5) },
      { kind: "next", upTo: T(5) },
    ],
    [
      "a booking exactly at the sent cursor marks the server inclusive",
      { upTo: T(9), sentCursor: T(9), count: 3, times: [T(9), T(8), T(7)], hasMore: true },
      { kind: "next", upTo: T(7), inclusive: true },
    ],
    [
      "an all-tie page at +1 ms asks again inclusively",
      {
        upTo: T(9),
        sentCursor: cursorFor(T(9), null),
        count: 3,
        times: [cursorFor(T(9), null) as string, T(9), T(9)],
        hasMore: true,
      },
      { kind: "retry-inclusive" },
    ],
    [
      "a full page of one timestamp is a tie overflow, stepped past",
      { upTo: T(9), sentCursor: cursorFor(T(9), null), count: 3, times: [T(9), T(9), T(9)], hasMore: true },
      { kind: "tie-overflow", at: T(9), upTo: "2026-01-01T00:00:08.999Z" },
    ],
    [
      "a short all-tie page with hasMore steps past the tie",
      { upTo: T(9), sentCursor: cursorFor(T(9), null), count: 2, times: [T(9), T(9)], hasMore: true },
      { kind: "next", upTo: "2026-01-01T00:00:08.999Z" },
    ],
    [
      "a server that ignores the cursor is stopped, not looped",
      { upTo: T(5), sentCursor: cursorFor(T(5), null), count: 3, times: [T(9), T(8), T(7)], hasMore: true },
      {
        kind: "stuck",
        message:
          "feed answered cursor 2026-01-01T00:00:05.001Z with bookings from 2026-01-01T00:00:07.000Z, none older than 2026-01-01T00:00:05.000Z",
      },
    ],
    [
      "records without times fall back to the server's nextCursor",
      { count: 3, times: [], hasMore: true, nextCursor: T(3) },
      { kind: "next", upTo: T(3) },
    ],
    [
      "records without times and no nextCursor cannot continue",
      { count: 3, times: [], hasMore: true },
      { kind: "stuck", message: "page has no usable createdAt and no nextCursor" },
    ],
  ];
  it.each(cases)("%s", (_name, facts, expected) => {
    expect(nextStep({ ...base, ...facts })).toEqual(expected);
  });
});
