/**
 * The page planner (src/store/mirror/plan.ts) in tables: the one rule both databases execute for
 * what a page inserts, overwrites, touches, records as changes and counts. The stores' own suites
 * (store*.test.ts, mirror-contract.test.ts) prove the statements carry the plan out.
 */
import { describe, expect, it } from "vitest";
import { FEED, LIST, type Plan, planPage, type Stored, type View } from "../src/store/mirror/plan.js";
import type { Param } from "../src/store/rows.js";

const AT = "2026-03-01T00:00:00.000Z";

/** A row of `view`: `_id`, type, the columns (`set` by name, others null), JSON, problems. */
function row(
  view: View,
  id: string,
  set: Record<string, Param>,
  json: string,
  problems: string | null = null,
  type: Param = null,
) {
  return [id, type, ...view.columns.map((c) => set[c] ?? null), json, problems];
}

/** A stored booking: what the plan reads of it. */
function stored(id: string, fields: Partial<Stored> = {}): [string, Stored] {
  return [id, { json: null, bookingType: null, missingSince: null, remote_updated_at: null, ...fields }];
}

const plan = (view: View, rows: Param[][], before: Array<[string, Stored]> = []) =>
  planPage(view, rows, (r) => r, new Map(before), AT);

/** The plan with written rows as their ids and the JSON of each, for short expectations. */
function summary(p: Plan<Param[]>) {
  return {
    writes: p.writes.map((r) => `${r[0]}=${r.at(-2)}`),
    replaced: p.replaced,
    touched: p.touched,
    respelled: p.respelled.map(([id, json]) => `${id}=${json}`),
    changes: p.changes.map(([id, field, old, now]) => `${id}.${field}: ${old} -> ${now}`),
    counts: `${p.counts.inserted}i ${p.counts.updated}u ${p.counts.unchanged}n`,
  };
}

interface Case {
  name: string;
  view: View;
  rows: Param[][];
  before?: Array<[string, Stored]>;
  want: ReturnType<typeof summary>;
}

const none = { writes: [], replaced: [], touched: [], respelled: [], changes: [] };

const cases: Case[] = [
  {
    name: "a new row is inserted, with no change recorded",
    view: FEED,
    rows: [row(FEED, "a", { paid: 1 }, '{"v":1}')],
    want: { ...none, writes: ['a={"v":1}'], counts: "1i 0u 0n" },
  },
  {
    name: "the same JSON is unchanged and not touched",
    view: FEED,
    rows: [row(FEED, "a", {}, '{"v":1}')],
    before: [stored("a", { json: '{"v":1}' })],
    want: { ...none, counts: "0i 0u 1n" },
  },
  {
    name: "the same record in another spelling is unchanged: its text alone is stored",
    view: FEED,
    rows: [row(FEED, "a", {}, '{"v":1,"w":"x"}')],
    before: [stored("a", { json: '{ "v": 1, "w": "\\u0078" }' })],
    want: { ...none, respelled: ['a={"v":1,"w":"x"}'], counts: "0i 0u 1n" },
  },
  {
    name: "a stale copy in another spelling is not stored",
    view: LIST,
    rows: [row(LIST, "a", { remote_updated_at: "2026-01-01T00:00:00.000Z" }, '{"v":1.0}')],
    before: [stored("a", { json: '{"v":1}', remote_updated_at: "2026-02-01T00:00:00.000Z" })],
    want: { ...none, touched: ["a"], counts: "0i 0u 1n" },
  },
  {
    name: "a respelt copy the page then changes is written, not respelt",
    view: FEED,
    rows: [row(FEED, "a", {}, '{"v": 1}'), row(FEED, "a", {}, '{"v":2}')],
    before: [stored("a", { json: '{"v":1}' })],
    want: { ...none, writes: ['a={"v":2}'], replaced: ["a"], counts: "0i 1u 1n" },
  },
  {
    name: "an unchanged summary from a typed stream teaches its type: touched",
    view: FEED,
    rows: [row(FEED, "a", {}, '{"v":1}', null, "IN")],
    before: [stored("a", { json: '{"v":1}' })],
    want: { ...none, touched: ["a"], counts: "0i 0u 1n" },
  },
  {
    name: "an unchanged summary of a known type is not touched",
    view: FEED,
    rows: [row(FEED, "a", {}, '{"v":1}', null, "IN")],
    before: [stored("a", { json: '{"v":1}', bookingType: "IN" })],
    want: { ...none, counts: "0i 0u 1n" },
  },
  {
    name: "a booking back from missing is touched",
    view: FEED,
    rows: [row(FEED, "a", {}, '{"v":1}')],
    before: [stored("a", { json: '{"v":1}', missingSince: AT })],
    want: { ...none, touched: ["a"], counts: "0i 0u 1n" },
  },
  {
    name: "a changed summary is written, its tracked values recorded as changes",
    view: FEED,
    rows: [row(FEED, "a", { paid: 1, booking_state: "done" }, '{"v":2}')],
    before: [stored("a", { json: '{"v":1}', paid: 0, booking_state: "done" })],
    want: {
      ...none,
      writes: ['a={"v":2}'],
      replaced: ["a"],
      changes: ["a.paid: 0 -> 1"],
      counts: "0i 1u 0n",
    },
  },
  {
    name: "the feed's first summary of a booking the list stored, changing nothing, counts unchanged",
    view: FEED,
    rows: [row(FEED, "a", { paid: 1 }, '{"v":1}')],
    before: [stored("a", { json: null, paid: 1 })],
    want: { ...none, writes: ['a={"v":1}'], replaced: ["a"], counts: "0i 0u 1n" },
  },
  {
    name: "details after a summary are an update, not a change",
    view: LIST,
    rows: [row(LIST, "a", { paid: 1, carrier: "dhl" }, '{"d":1}')],
    before: [stored("a", { json: null, paid: 1, carrier: null })],
    want: { ...none, writes: ['a={"d":1}'], replaced: ["a"], counts: "0i 1u 0n" },
  },
  {
    name: "a stale list payload (older updatedAt) is refused and touched",
    view: LIST,
    rows: [row(LIST, "a", { remote_updated_at: "2026-01-01T00:00:00.000Z", paid: 0 }, '{"d":0}')],
    before: [stored("a", { json: '{"d":1}', remote_updated_at: "2026-02-01T00:00:00.000Z", paid: 1 })],
    want: { ...none, touched: ["a"], counts: "0i 0u 1n" },
  },
  {
    name: "a list payload without updatedAt cannot be judged stale",
    view: LIST,
    rows: [row(LIST, "a", { paid: 0 }, '{"d":0}')],
    before: [stored("a", { json: '{"d":1}', remote_updated_at: "2026-02-01T00:00:00.000Z", paid: 1 })],
    want: {
      ...none,
      writes: ['a={"d":0}'],
      replaced: ["a"],
      changes: ["a.paid: 1 -> 0"],
      counts: "0i 1u 0n",
    },
  },
  {
    name: "an unchanged list payload is touched (its statement judges the marks)",
    view: LIST,
    rows: [row(LIST, "a", {}, '{"d":1}')],
    before: [stored("a", { json: '{"d":1}' })],
    want: { ...none, touched: ["a"], counts: "0i 0u 1n" },
  },
  {
    name: "of one new _id twice, the last copy is written and compared with the first",
    view: FEED,
    rows: [row(FEED, "a", { paid: 0 }, '{"v":1}'), row(FEED, "a", { paid: 1 }, '{"v":2}')],
    want: { ...none, writes: ['a={"v":2}'], changes: ["a.paid: 0 -> 1"], counts: "1i 1u 0n" },
  },
  {
    name: "of one _id twice, a stale second copy leaves the first",
    view: LIST,
    rows: [
      row(LIST, "a", { remote_updated_at: "2026-02-01T00:00:00.000Z" }, '{"d":2}'),
      row(LIST, "a", { remote_updated_at: "2026-01-01T00:00:00.000Z" }, '{"d":1}'),
    ],
    before: [stored("a", { json: '{"d":0}' })],
    want: { ...none, writes: ['a={"d":2}'], replaced: ["a"], counts: "0i 1u 1n" },
  },
  {
    name: "a copy touched, then changed, is written and not touched",
    view: FEED,
    rows: [row(FEED, "a", {}, '{"v":1}'), row(FEED, "a", {}, '{"v":2}')],
    before: [stored("a", { json: '{"v":1}', missingSince: AT })],
    want: { ...none, writes: ['a={"v":2}'], replaced: ["a"], counts: "0i 1u 1n" },
  },
  {
    name: "a value the source stopped serving, on a clean read, is a change to NULL",
    view: FEED,
    rows: [row(FEED, "a", {}, '{"v":2}')],
    before: [stored("a", { json: '{"v":1}', paid: 1 })],
    want: {
      ...none,
      writes: ['a={"v":2}'],
      replaced: ["a"],
      changes: ["a.paid: 1 -> null"],
      counts: "0i 1u 0n",
    },
  },
  {
    name: "a NULL on a read with problems is no change (the value may have failed its check)",
    view: FEED,
    rows: [row(FEED, "a", {}, '{"v":2}', "paid: not a boolean")],
    before: [stored("a", { json: '{"v":1}', paid: 1 })],
    want: { ...none, writes: ['a={"v":2}'], replaced: ["a"], counts: "0i 1u 0n" },
  },
];

describe("planPage", () => {
  it.each(cases)("$name", ({ view, rows, before, want }) => {
    expect(summary(plan(view, rows, before))).toEqual(want);
  });

  it("stamps each change with the booking and the page's time, as text", () => {
    const p = plan(
      FEED,
      [row(FEED, "a", { total_amount: 12.5 }, '{"v":2}')],
      [stored("a", { json: '{"v":1}', total_amount: 10 })],
    );
    expect(p.changes).toEqual([["a", "total_amount", "10", "12.5", AT]]);
  });

  it("builds events only when recording: the rest of the plan is the same either way", () => {
    const rows = [row(FEED, "a", { total_amount: 12.5 }, '{"v":2}'), row(FEED, "b", {}, '{"v":1}')];
    const before = new Map([stored("a", { json: '{"v":1}', total_amount: 10 })]);
    const on = planPage(FEED, rows, (r) => r, before, AT);
    const off = planPage(FEED, rows, (r) => r, before, AT, false);
    expect(on.events.map(([type, id, at, data]) => [type, id, at, JSON.parse(data).changes])).toEqual([
      ["booking.changed", "a", AT, [{ field: "total_amount", old: "10", new: "12.5" }]],
      ["booking.created", "b", AT, undefined],
    ]);
    expect(off.events).toEqual([]);
    expect({ ...off, events: on.events }).toEqual(on);
  });

  it("says a missing booking is back with what the mirror keeps, not a stale copy's values", () => {
    const p = plan(
      LIST,
      [
        row(
          LIST,
          "a",
          { remote_updated_at: "2026-01-01T00:00:00.000Z", booking_state: 1, paid: 0 },
          '{"d":0}',
        ),
      ],
      [
        stored("a", {
          json: '{"d":1}',
          remote_updated_at: "2026-02-01T00:00:00.000Z",
          missingSince: AT,
          booking_state: 3,
          paid: 1,
        }),
      ],
    );
    expect(p.events.map(([type, , , data]) => [type, JSON.parse(data).booking])).toEqual([
      ["booking.back", expect.objectContaining({ bookingState: 3, paid: true })],
    ]);
  });
});
