/** The simulator's generated data and its dataset queries, checked against the schemas and a brute-force model. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { describeIssues, fullBookingSchema, summaryBookingSchema } from "../src/api/schemas.js";
import {
  bookingTypeOf,
  Dataset,
  fullBooking,
  type SimFullBooking,
  SOURCE_PLATFORMS,
  sourcePlatformOf,
  summaryOf,
} from "../src/simulator/index.js";
import { FEED, feedPage, get, LIST, useSimulators, walkFeed } from "./support/sim-http.js";

const start = useSimulators();
const EPOCH = Date.UTC(2025, 0, 1);

/** subTotal + VAT + fees, to the kobo. */
function addsUp(b: SimFullBooking): number {
  const x = b.extraCharges;
  return (
    b.subTotal +
    b.bookingVat +
    x.fuelSurcharge.amount +
    x.packagingFee.amount +
    x.onShippingFee +
    b.bookingInsurance.fee
  );
}

describe("generated bookings", () => {
  it("pass the contract schemas in both views, over thousands of indexes, versions and two seeds", () => {
    const ids = new Set<string>();
    const searchIds = new Set<string>();
    for (const seed of [1, 42]) {
      for (let i = 0; i < 2000; i++) {
        const full = fullBooking(seed, i, i % 3, {
          createdAtMs: EPOCH + i * 1000,
          updatedAtMs: EPOCH + i * 2000,
        });
        const fullCheck = fullBookingSchema.safeParse(full);
        expect(fullCheck.success ? "ok" : describeIssues(fullCheck.error)).toBe("ok");
        const summaryCheck = summaryBookingSchema.safeParse(summaryOf(full));
        expect(summaryCheck.success ? "ok" : describeIssues(summaryCheck.error)).toBe("ok");
        expect(full._id).toMatch(/^[0-9a-f]{24}$/);
        ids.add(full._id);
        searchIds.add(full.searchId);
      }
    }
    expect([ids.size, searchIds.size]).toEqual([4000, 4000]);
  });

  it("carry their creation second at the head of _id, as MongoDB ObjectIds do", () => {
    // Bookings 0-2 share one second: the head is the same, the tail still tells them apart.
    const times = [0, 400, 999, 1000, 61_000, 86_400_000].map((dt) => EPOCH + dt);
    const ids = times.map((createdAtMs, i) => fullBooking(5, i, 0, { createdAtMs })._id);
    expect(ids.map((id) => Number.parseInt(id.slice(0, 8), 16))).toEqual(
      times.map((ms) => Math.floor(ms / 1000)),
    );
    expect(new Set(ids).size).toBe(ids.length);
    // 2025-01-01T00:00:00Z is 0x67748580 in Unix seconds.
    expect(ids[0]?.slice(0, 8)).toBe("67748580");
  });

  it("add up: subTotal + 7.5% VAT + fees = totalAmount, weights and counts agree", () => {
    for (let i = 0; i < 2000; i++) {
      const b = fullBooking(7, i, i % 4);
      expect(Math.abs(addsUp(b) - b.totalAmount)).toBeLessThan(0.005);
      expect(Math.abs(b.bookingVat - b.subTotal * 0.075)).toBeLessThanOrEqual(0.005);
      expect(b.numberOfPackages).toBe(b.packages.packages.length);
      const weight = b.packages.packages.reduce((s, p) => s + p.actualWeight, 0);
      expect(b.weight).toBeCloseTo(weight, 6);
      expect(b.packages.itemsValue).toBe(
        b.packages.packages.flatMap((p) => p.items).reduce((s, it) => s + it.quantity * it.price, 0),
      );
    }
  });

  it("look like the Nigerian market: NG senders, foreign receivers for IN, local for LC, every platform", () => {
    const sample = Array.from({ length: 2000 }, (_, i) => fullBooking(3, i));
    const share = sample.filter((b) => b.type === "IN").length / sample.length;
    expect(share).toBeGreaterThan(0.25);
    expect(share).toBeLessThan(0.45);
    sample.forEach((b, i) => {
      expect(b.sender.addressDetails.countryCode).toBe("NG");
      expect(b.receiver.addressDetails.countryCode === "NG").toBe(b.type === "LC");
      expect(b.type).toBe(bookingTypeOf(3, i));
    });
    expect(new Set(sample.map((b) => b.sourcePlatform))).toEqual(new Set(SOURCE_PLATFORMS));
    const cities = new Set(sample.map((b) => b.receiver.addressDetails.city));
    for (const city of ["Lagos", "Abuja", "Kano", "Port Harcourt", "London", "Houston", "Accra"]) {
      expect(cities).toContain(city);
    }
  });

  it("are a pure function of (seed, i, version); a summary is the full view's subset", () => {
    expect(JSON.stringify(fullBooking(5, 77, 2))).toBe(JSON.stringify(fullBooking(5, 77, 2)));
    expect(fullBooking(6, 77)._id).not.toBe(fullBooking(5, 77)._id);
    const full = fullBooking(5, 77);
    const summary = summaryOf(full);
    expect(summary).toMatchObject({
      _id: full._id,
      sourcePlatform: full.sourcePlatform,
      totalAmount: full.totalAmount,
      paid: full.paid,
      createdAt: full.createdAt,
      receiver: {
        contact: { email: full.receiver.contact.email },
        addressDetails: { city: full.receiver.addressDetails.city },
      },
    });
    expect(summary.sender.contact).not.toHaveProperty("email");
  });

  it("change on update: paid flips, states move, total rises by NGN 250 a version, identity stays", () => {
    for (let i = 0; i < 200; i++) {
      const [v0, v1, v2] = [0, 1, 2].map((v) => fullBooking(11, i, v)) as [
        SimFullBooking,
        SimFullBooking,
        SimFullBooking,
      ];
      expect([v1.paid, v2.paid]).toEqual([!v0.paid, v0.paid]);
      expect(v1.bookingState).not.toBe(v0.bookingState);
      expect(v1.orderState).not.toBe(v0.orderState);
      expect(v2.totalAmount - v0.totalAmount).toBeCloseTo(500, 2);
      expect([v2._id, v2.createdAt, v2.sourcePlatform, v2.type]).toEqual([
        v0._id,
        v0.createdAt,
        v0.sourcePlatform,
        v0.type,
      ]);
    }
  });
});

/** A dataset scenario: sizes, a createdAt pattern with ties of any length, and overlays. */
const scenario = fc.record({
  seed: fc.integer({ min: 0, max: 1000 }),
  n: fc.integer({ min: 0, max: 60 }),
  inserts: fc.integer({ min: 0, max: 5 }),
  steps: fc.array(fc.constantFrom(0, 0, 1000, 3000), { minLength: 70, maxLength: 70 }),
  hidden: fc.array(fc.integer({ min: 0, max: 70 }), { maxLength: 8 }),
  removed: fc.array(fc.integer({ min: 0, max: 64 }), { maxLength: 8 }),
});
const query = fc.record({
  limit: fc.integer({ min: 1, max: 12 }),
  cursorAt: fc.option(fc.integer({ min: 0, max: 70 })),
  inclusive: fc.boolean(),
  bookingType: fc.constantFrom(undefined, "IN" as const, "LC" as const),
  page: fc.integer({ min: 1, max: 8 }),
  sourcePlatform: fc.constantFrom(undefined, ...SOURCE_PLATFORMS, "fax"),
});
type Scenario = ReturnType<typeof scenario.generate>["value"];
type Query = ReturnType<typeof query.generate>["value"];

/** The dataset under test and the brute-force truth: what is visible, sorted by (createdAt, index) descending. */
function build(s: Scenario) {
  const times: number[] = [];
  for (const step of s.steps) times.push((times.at(-1) ?? EPOCH) + step);
  const createdAtOf = (i: number): number => times[i] ?? EPOCH + 1e9 + i;
  const d = new Dataset({ seed: s.seed, bookings: s.n, createdAtOf, hidden: s.hidden });
  d.insert(s.inserts);
  const hidden = new Set(s.hidden);
  const removed = new Set(s.removed.filter((i) => i < d.size));
  for (const i of removed) d.remove(i);
  const visible = (): number[] =>
    Array.from({ length: d.size }, (_, i) => i)
      .filter((i) => !hidden.has(i) && !removed.has(i))
      .sort((a, b) => createdAtOf(b) - createdAtOf(a) || b - a);
  return { d, createdAtOf, hidden, removed, visible };
}

/** Asserts one feed page and one list page against the model. */
function check(m: ReturnType<typeof build>, seed: number, q: Query): void {
  const { d, createdAtOf } = m;
  const visible = m.visible();
  const cursorMs = q.cursorAt === null ? undefined : createdAtOf(q.cursorAt);
  const before = (i: number): boolean =>
    cursorMs === undefined || (q.inclusive ? createdAtOf(i) <= cursorMs : createdAtOf(i) < cursorMs);
  const inFeed = visible.filter(
    (i) => (!q.bookingType || bookingTypeOf(seed, i) === q.bookingType) && before(i),
  );
  const page = inFeed.slice(0, q.limit);
  const last = page.at(-1);
  expect(d.feed({ limit: q.limit, cursorMs, inclusive: q.inclusive, bookingType: q.bookingType })).toEqual({
    indexes: page,
    nextCursorMs: last === undefined ? null : createdAtOf(last),
    hasMore: inFeed.length > q.limit,
  });
  const inList = visible.filter((i) => !q.sourcePlatform || sourcePlatformOf(seed, i) === q.sourcePlatform);
  const offset = (q.page - 1) * q.limit;
  expect(d.list({ page: q.page, pageSize: q.limit, sourcePlatform: q.sourcePlatform })).toEqual({
    indexes: inList.slice(offset, offset + q.limit),
    total: inList.length,
  });
}

describe("dataset queries", () => {
  it("match a brute-force model for any ties, overlays, filters, cursors and pages, before and after changes", () => {
    fc.assert(
      fc.property(scenario, query, (s, q) => {
        const m = build(s);
        check(m, s.seed, q);
        // Change visibility after the first queries, so cached positions must follow.
        const released = s.hidden.slice(0, 2);
        m.d.release(released);
        for (const i of released) m.hidden.delete(i);
        const extra = m.d.size - 1;
        if (extra >= 0) {
          m.d.remove(extra);
          m.removed.add(extra);
        }
        check(m, s.seed, q);
      }),
      { seed: 20250601, numRuns: 500 },
    );
  });

  it("rejects a createdAtOf that goes back in time", () => {
    expect(() => new Dataset({ bookings: 10, createdAtOf: (i) => (i === 5 ? 0 : i) })).toThrow(
      /non-decreasing/,
    );
  });

  it("serves 250 bookings sharing one createdAt: exclusive skips the tie, inclusive repeats it", async () => {
    const T = EPOCH + 10_000_000;
    const createdAtOf = (i: number): number => (i < 250 ? T : T + (i - 249) * 1000);
    const exclusive = await start({ bookings: 300, createdAtOf });
    expect((await walkFeed(exclusive, { limit: 100 })).flatMap((p) => p.bookings)).toHaveLength(100);
    const inclusive = await start({ bookings: 300, createdAtOf, cursor: "inclusive" });
    const first = await feedPage(inclusive, { limit: 100 });
    const second = await feedPage(inclusive, { limit: 100, cursor: first.nextCursor ?? "" });
    const third = await feedPage(inclusive, { limit: 100, cursor: second.nextCursor ?? "" });
    expect(second.nextCursor).toBe(new Date(T).toISOString());
    expect([third.bookings, third.nextCursor, third.hasMore]).toEqual([
      second.bookings,
      second.nextCursor,
      true,
    ]);
  });

  it("answers deep pages of 1,000,000 bookings", async () => {
    const sim = await start({ bookings: 1_000_000, seed: 2 });
    const cursor = sim.dataset.full(500).createdAt;
    const page = await feedPage(sim, { limit: 100, cursor, bookingType: "IN" });
    let expected = 499;
    while (bookingTypeOf(2, expected) !== "IN") expected--;
    expect(page.bookings).toHaveLength(100);
    expect(page.bookings[0]?._id).toBe(sim.dataset.full(expected)._id);
    const list = await get(sim, LIST, { page: 9000, pageSize: 100 });
    expect((list.json as { data: Array<{ _id: string }> }).data[0]?._id).toBe(
      sim.dataset.full(999_999 - 899_900)._id,
    );
    const web = await get(sim, LIST, { page: 3000, pageSize: 100, sourcePlatform: "web" });
    expect(web.json).toMatchObject({ success: true, pagination: { page: 3000 } });
    expect((await get(sim, FEED, { cursor: sim.dataset.full(3).createdAt })).json).toMatchObject({
      data: { hasMore: false },
    });
  });
});
