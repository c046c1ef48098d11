/**
 * The walk's reducer (src/sync/feed/advance.ts) in a table: each action from a constructed page,
 * with the progress it leaves, and its input left untouched.
 */
import { describe, expect, it } from "vitest";
import type { SummaryBooking } from "../src/api/schemas.js";
import { type Action, advance, type PageRead } from "../src/sync/feed/advance.js";
import type { FeedPage, WalkProgress } from "../src/sync/ports.js";

/** Instant of second `s` on a fixed day (nine fraction digits, as the walk steers by). */
const T = (s: number) => `2026-01-01T00:00:${String(s).padStart(2, "0")}.000000000Z`;
/** Millisecond time of second `s`. */
const M = (s: number) => `2026-01-01T00:00:${String(s).padStart(2, "0")}.000Z`;

type Rec = FeedPage["records"][number];
const ok = (id: string, s: number): Rec => ({
  ok: true,
  id,
  createdAt: M(s),
  at: T(s),
  record: { _id: id } as unknown as SummaryBooking,
  raw: {},
  problems: [],
});
const reject = (id: string | null): Rec => ({
  ok: false,
  id,
  createdAt: null,
  reason: "no createdAt",
  raw: {},
});

const start: WalkProgress = {
  startedAt: M(59),
  floor: null,
  ceiling: null,
  upTo: null,
  anchor: null,
  fallback: null,
  top: null,
  pages: 4,
};
const read = (records: Rec[], extra: Partial<PageRead> = {}, hasMore = true): PageRead => ({
  upTo: null,
  again: false,
  limit: 3,
  page: { records, hasMore },
  ...extra,
});

type Case = [
  name: string,
  progress: Partial<WalkProgress>,
  read: PageRead,
  action: Action,
  after: Partial<WalkProgress>,
];
const cases: Case[] = [
  [
    "a full page reads on from its last record, which the next page must serve again",
    {},
    read([ok("a", 9), ok("b", 8), ok("c", 7)]),
    { kind: "next", upTo: T(7), anchor: { at: T(7), ids: ["c"] }, fallback: { at: T(8), ids: ["b"] } },
    { pages: 5, top: T(9), upTo: T(7), anchor: { at: T(7), ids: ["c"] }, fallback: { at: T(8), ids: ["b"] } },
  ],
  [
    "the checkpoint's candidate leaves out a record newer than the one before it",
    { top: T(5) },
    read([ok("a", 9), ok("x", 20), ok("c", 7)]),
    { kind: "next", upTo: T(7), anchor: { at: T(7), ids: ["c"] }, fallback: { at: T(9), ids: ["a"] } },
    { pages: 5, top: T(9), upTo: T(7), anchor: { at: T(7), ids: ["c"] }, fallback: { at: T(9), ids: ["a"] } },
  ],
  [
    "an empty page ends the walk",
    { upTo: T(7), top: T(9) },
    read([], { upTo: T(7) }, false),
    { kind: "done", reason: "end" },
    { pages: 5, top: T(9), upTo: T(7), short: 0 },
  ],
  [
    "a page reaching below the floor ends the walk",
    { floor: T(8) },
    read([ok("a", 9), ok("b", 7), ok("c", 6)]),
    { kind: "done", reason: "floor" },
    { pages: 5, top: T(9), upTo: null },
  ],
  [
    "a page that does not serve the anchor again falls back to the fallback",
    { upTo: T(7), anchor: { at: T(7), ids: ["c"] }, fallback: { at: T(8), ids: ["b"] } },
    read([ok("d", 6), ok("e", 5), ok("f", 4)], { upTo: T(7) }),
    { kind: "fall-back", upTo: T(8), anchor: { at: T(8), ids: ["b"] }, missing: { at: T(7), ids: ["c"] } },
    { pages: 5, top: T(6), upTo: T(8), anchor: { at: T(8), ids: ["b"] }, fallback: null },
  ],
  [
    "a short page is remembered with its count (a next page as short may be a capping server's)",
    { upTo: T(9) },
    read([ok("b", 8), ok("c", 7)], { upTo: T(9) }, false),
    { kind: "next", upTo: T(7), anchor: { at: T(7), ids: ["c"] }, fallback: { at: T(8), ids: ["b"] } },
    {
      pages: 5,
      top: T(8),
      upTo: T(7),
      anchor: { at: T(7), ids: ["c"] },
      fallback: { at: T(8), ids: ["b"] },
      short: 2,
    },
  ],
  [
    "a short page of one time after one as short is a tie run, read on the list",
    { upTo: T(7), anchor: { at: T(7), ids: ["c", "d"] }, short: 2 },
    read([ok("c", 7), ok("d", 7)], { upTo: T(7) }, false),
    { kind: "tie", from: M(7), to: M(7), upTo: "2026-01-01T00:00:06.999999999Z", known: ["c", "d"] },
    { pages: 5, top: T(7), upTo: "2026-01-01T00:00:06.999999999Z", anchor: null, fallback: null, short: 2 },
  ],
  [
    // A probed time is no end the feed can vouch for: a capping server may have cut this first page.
    "a short first page of one time at a slice's ceiling is a tie run",
    { ceiling: T(7), upTo: T(7) },
    read([ok("c", 7), ok("d", 7)], { upTo: T(7) }, false),
    { kind: "tie", from: M(7), to: M(7), upTo: "2026-01-01T00:00:06.999999999Z", known: ["c", "d"] },
    { pages: 5, top: T(7), upTo: "2026-01-01T00:00:06.999999999Z", anchor: null, fallback: null, short: 2 },
  ],
  [
    "a full page forgets a short page before it",
    { short: 1 },
    read([ok("a", 9), ok("b", 8), ok("c", 7)]),
    { kind: "next", upTo: T(7), anchor: { at: T(7), ids: ["c"] }, fallback: { at: T(8), ids: ["b"] } },
    {
      pages: 5,
      top: T(9),
      upTo: T(7),
      anchor: { at: T(7), ids: ["c"] },
      fallback: { at: T(8), ids: ["b"] },
      short: undefined,
    },
  ],
  [
    "a full page of one millisecond is a tie run, with the bookings it served",
    { upTo: T(7) },
    read([ok("a", 7), ok("b", 7), ok("c", 7)], { upTo: T(7) }),
    { kind: "tie", from: M(7), to: M(7), upTo: "2026-01-01T00:00:06.999999999Z", known: ["a", "b", "c"] },
    { pages: 5, top: T(7), upTo: "2026-01-01T00:00:06.999999999Z", anchor: null, fallback: null },
  ],
  [
    "an empty page that claims more is asked once more, the progress untouched",
    {},
    read([]),
    { kind: "again", problem: "the feed answered an empty page that claims more (hasMore: true)" },
    {},
  ],
  [
    "asked again, an empty page that claims more is an end only the list can confirm",
    { upTo: T(7) },
    read([], { upTo: T(7), again: true }),
    {
      kind: "end-unconfirmed",
      upTo: T(7),
      message: "the feed answered an empty page that claims more (hasMore: true)",
    },
    { pages: 5, upTo: T(7) },
  ],
  [
    "an empty page at a slice's ceiling is no end the feed can vouch for",
    { ceiling: T(30), upTo: T(30) },
    read([], { upTo: T(30) }, false),
    { kind: "end-unconfirmed", upTo: T(30), message: "the feed served nothing at a slice's ceiling" },
    { pages: 5, upTo: T(30), short: 0 },
  ],
  [
    "a page of records none can steer by, asked again, stops where it is",
    { upTo: T(7) },
    read([reject("q"), reject(null), reject("r")], { upTo: T(7), again: true, limit: 3 }),
    {
      kind: "end-unconfirmed",
      upTo: T(7),
      message: "the feed answered 3 records and none it can steer by (no createdAt)",
    },
    { pages: 5, upTo: T(7) },
  ],
  [
    "a page that serves nothing older than the position, asked again, stops to resume there",
    { upTo: T(7), anchor: null },
    read([ok("a", 9), ok("b", 8), ok("c", 8)], { upTo: T(7), again: true }),
    {
      kind: "refuse",
      restart: false,
      message: `the feed answered cursor 2026-01-01T00:00:07.001Z with 3 records, none older than ${T(7)} (newest ${T(9)}); stopped with the checkpoint unmoved (the next run resumes at ${T(7)})`,
    },
    { pages: 4, upTo: T(7) },
  ],
  [
    "an anchor not served again with no fallback starts the walk over from its ceiling",
    { ceiling: T(30), upTo: T(7), anchor: { at: T(7), ids: ["c"] }, top: T(9) },
    read([ok("d", 6), ok("e", 5), ok("f", 4)], { upTo: T(7) }),
    {
      kind: "refuse",
      restart: true,
      message: `the feed did not serve again the bookings at ${T(7)} (c) that its previous page ended with: its times or its order are inconsistent; stopped with the checkpoint unmoved (the next run starts this walk over from ${T(30)})`,
    },
    { pages: 4, upTo: T(30), anchor: null, fallback: null, top: T(9) },
  ],
];

describe("advance", () => {
  it.each(cases)("%s", (_name, before, pageRead, action, after) => {
    const progress = deepFreeze({ ...start, ...before });
    const out = advance(progress, deepFreeze(pageRead));
    expect(out.action).toEqual(action);
    expect(out.progress).toEqual({ ...progress, ...after });
  });

  it("covers every action", () => {
    const kinds = new Set(cases.map(([, , , action]) => action.kind));
    expect([...kinds].sort()).toEqual([
      "again",
      "done",
      "end-unconfirmed",
      "fall-back",
      "next",
      "refuse",
      "tie",
    ]);
  });
});

/** Freezes `value` and everything in it, so a mutation throws. */
function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}
