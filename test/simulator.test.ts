/** The simulator's HTTP contract (partner-api.md sections 2.1, 4, 5, 7), through real HTTP on 127.0.0.1. */
import { describe, expect, it } from "vitest";
import type { Simulator } from "../src/simulator/index.js";
import {
  AUTH,
  FEED,
  type FeedData,
  feedPage,
  get,
  LIST,
  NOW,
  useSimulators,
  walkFeed,
} from "./support/sim-http.js";

const start = useSimulators();
const EPOCH = Date.UTC(2025, 0, 1);

const idsOf = (sim: Simulator, indexes: number[]): string[] => indexes.map((i) => sim.dataset.full(i)._id);
const ids = (pages: FeedData[]): string[] => pages.flatMap((p) => p.bookings.map((b) => b._id));

describe("auth", () => {
  it.each([
    ["no header", {}],
    ["a wrong token", { authorization: "Bearer nope" }],
    ["no Bearer scheme", { authorization: "sim-token" }],
  ])("answers 401 with the error envelope for %s, on both endpoints", async (_, headers) => {
    const sim = await start({ bookings: 5 });
    for (const path of [FEED, LIST]) {
      const reply = await get(sim, path, {}, headers);
      expect(reply.status).toBe(401);
      expect(reply.json).toEqual({
        success: false,
        status: 401,
        message: "Invalid or expired token",
        timestamp: new Date(NOW).toISOString(),
      });
    }
  });

  it("accepts the configured token", async () => {
    const sim = await start({ bookings: 5, token: "s3cret" });
    expect((await get(sim, FEED, {}, { authorization: "Bearer s3cret" })).status).toBe(200);
    expect((await get(sim, FEED, {}, AUTH)).status).toBe(401);
  });
});

describe("parameters", () => {
  it("defaults to 10 bookings, page 1, and uses the contract's envelopes", async () => {
    const sim = await start({ bookings: 95 });
    const feed = await get(sim, FEED);
    expect(Object.keys(feed.json as object)).toEqual(["success", "data", "status", "message", "timestamp"]);
    const data = (feed.json as { data: FeedData }).data;
    expect(Object.keys(data)).toEqual(["bookings", "nextCursor", "hasMore"]);
    expect(data.bookings).toHaveLength(10);
    expect(Object.keys(data.bookings[0] ?? {})).toEqual([
      "_id",
      "searchId",
      "sourcePlatform",
      "receiver",
      "sender",
      "weight",
      "numberOfPackages",
      "totalAmount",
      "paid",
      "bookingState",
      "orderState",
      "bookingDate",
      "createdAt",
    ]);
    const list = await get(sim, LIST);
    expect(Object.keys(list.json as object)).toEqual([
      "success",
      "data",
      "pagination",
      "status",
      "message",
      "timestamp",
    ]);
    expect(list.json).toMatchObject({
      success: true,
      status: 200,
      pagination: { total: 95, page: 1, pageSize: 10, totalPages: 10 },
    });
    expect((list.json as { data: unknown[] }).data).toHaveLength(10);
  });

  it("serves up to the maximum of 100", async () => {
    const sim = await start({ bookings: 150 });
    expect((await feedPage(sim, { limit: 100 })).bookings).toHaveLength(100);
    const list = await get(sim, LIST, { pageSize: 100, page: 2 });
    expect((list.json as { data: unknown[] }).data).toHaveLength(50);
  });

  it.each([
    [FEED, { limit: 101 }, "limit"],
    [FEED, { limit: 0 }, "limit"],
    [FEED, { limit: "abc" }, "limit"],
    [FEED, { limit: "1.5" }, "limit"],
    [FEED, { limit: "-1" }, "limit"],
    [FEED, { limit: "" }, "limit"],
    [FEED, { cursor: "yesterday" }, "cursor"],
    [FEED, { cursor: "2025-13-45T00:00:00Z" }, "cursor"],
    [FEED, { bookingType: "XX" }, "bookingType"],
    [FEED, { bookingType: "in" }, "bookingType"],
    [LIST, { pageSize: 101 }, "pageSize"],
    [LIST, { pageSize: 0 }, "pageSize"],
    [LIST, { page: 0 }, "page"],
    [LIST, { page: "two" }, "page"],
  ])("%s with %o answers 400 naming '%s'", async (path, params, name) => {
    const sim = await start({ bookings: 5 });
    const reply = await get(sim, path, params);
    expect(reply.status).toBe(400);
    expect(Object.keys(reply.json as object)).toEqual(["success", "status", "message", "timestamp"]);
    expect(reply.json).toMatchObject({ success: false, status: 400 });
    expect((reply.json as { message: string }).message).toContain(`'${name}'`);
  });

  it("answers a page beyond totalPages with no data and the true pagination", async () => {
    const sim = await start({ bookings: 95 });
    const reply = await get(sim, LIST, { page: 11 });
    expect(reply.status).toBe(200);
    expect(reply.json).toMatchObject({
      data: [],
      pagination: { total: 95, page: 11, pageSize: 10, totalPages: 10 },
    });
  });

  it("answers 404 for other paths and 405 for other methods", async () => {
    const sim = await start({ bookings: 5 });
    expect((await get(sim, "/partner/booking/nope")).status).toBe(404);
    const post = await fetch(sim.url + FEED, { method: "POST", headers: AUTH });
    expect(post.status).toBe(405);
    await post.text();
  });
});

describe("order and cursor", () => {
  it("serves newest first in both views", async () => {
    const sim = await start({ bookings: 100, epochMs: EPOCH });
    const feed = await feedPage(sim);
    expect(feed.bookings.map((b) => b._id)).toEqual(idsOf(sim, [99, 98, 97, 96, 95, 94, 93, 92, 91, 90]));
    const times = feed.bookings.map((b) => Date.parse(b.createdAt));
    expect(times).toEqual([...times].sort((a, b) => b - a));
    expect(feed.nextCursor).toBe(feed.bookings.at(-1)?.createdAt);
    const list = (await get(sim, LIST, { page: 2 })).json as { data: Array<{ _id: string }> };
    expect(list.data.map((b) => b._id)).toEqual(idsOf(sim, [89, 88, 87, 86, 85, 84, 83, 82, 81, 80]));
  });

  it("starts the newest base booking at the clock, rounded down to the second", async () => {
    const sim = await start({ bookings: 10, now: () => NOW + 789 });
    expect((await feedPage(sim, { limit: 1 })).bookings[0]?.createdAt).toBe(new Date(NOW).toISOString());
  });

  // 20 bookings in runs of 4 share a createdAt; pages of 6 end in the middle of a run.
  it("under an exclusive cursor, makes the rest of a tie at the page boundary unreachable", async () => {
    const sim = await start({ bookings: 20, tieRun: 4, epochMs: EPOCH });
    const pages = await walkFeed(sim, { limit: 6 });
    expect(pages.map((p) => p.bookings.length)).toEqual([6, 6, 4]);
    expect(pages[0]?.nextCursor).toBe(new Date(EPOCH + 3 * 60_000).toISOString());
    const seen = new Set(ids(pages));
    const missed = Array.from({ length: 20 }, (_, i) => i).filter((i) => !seen.has(sim.dataset.full(i)._id));
    expect(missed).toEqual([4, 5, 12, 13]);
  });

  it("under an inclusive cursor, repeats the boundary's tie and so reaches every booking", async () => {
    const sim = await start({ bookings: 20, tieRun: 4, epochMs: EPOCH, cursor: "inclusive" });
    const pages = await walkFeed(sim, { limit: 6 });
    expect(pages.map((p) => p.bookings.length)).toEqual([6, 6, 6, 6, 4]);
    expect(pages[1]?.bookings.map((b) => b._id)).toEqual(idsOf(sim, [15, 14, 13, 12, 11, 10]));
    expect(new Set(ids(pages)).size).toBe(20);
  });

  it("walks the whole feed with tieRun=1 and returns every booking exactly once", async () => {
    const sim = await start({ bookings: 1000 });
    for (const limit of [100, 7]) {
      const pages = await walkFeed(sim, { limit });
      expect(pages).toHaveLength(Math.ceil(1000 / limit));
      expect(ids(pages)).toEqual(sim.allSummaries().map((b) => b._id));
      expect(new Set(ids(pages)).size).toBe(1000);
      expect(pages.at(-1)?.hasMore).toBe(false);
    }
  });
});

describe("filters and pagination", () => {
  it("filters the feed by bookingType", async () => {
    const sim = await start({ bookings: 300 });
    const typeOf = new Map(sim.allFull().map((b) => [b._id, b.type]));
    const walked = { IN: ids(await walkFeed(sim, { limit: 40, bookingType: "IN" })), LC: [] as string[] };
    walked.LC = ids(await walkFeed(sim, { limit: 40, bookingType: "LC" }));
    expect(walked.IN.length).toBeGreaterThan(50);
    expect(walked.IN.every((id) => typeOf.get(id) === "IN")).toBe(true);
    expect(walked.LC.every((id) => typeOf.get(id) === "LC")).toBe(true);
    expect(walked.IN.length + walked.LC.length).toBe(300);
    expect(walked.IN).toEqual(sim.allSummaries({ bookingType: "IN" }).map((b) => b._id));
  });

  it("filters the list by sourcePlatform, with totals to match", async () => {
    const sim = await start({ bookings: 300 });
    const expected = sim.allFull().filter((b) => b.sourcePlatform === "web");
    const seen: string[] = [];
    for (let page = 1; page <= 2; page++) {
      const reply = (await get(sim, LIST, { sourcePlatform: "web", pageSize: 100, page })).json as {
        data: Array<{ _id: string; sourcePlatform: string }>;
        pagination: { total: number; totalPages: number };
      };
      expect(reply.pagination).toMatchObject({
        total: expected.length,
        totalPages: Math.ceil(expected.length / 100),
      });
      expect(reply.data.every((b) => b.sourcePlatform === "web")).toBe(true);
      seen.push(...reply.data.map((b) => b._id));
    }
    expect(seen).toEqual(expected.map((b) => b._id).slice(0, 200));
    const none = (await get(sim, LIST, { sourcePlatform: "fax" })).json;
    expect(none).toMatchObject({ data: [], pagination: { total: 0, totalPages: 0 } });
  });

  it("pages through the list with every booking exactly once and a short last page", async () => {
    const sim = await start({ bookings: 95 });
    const seen: string[] = [];
    for (let page = 1; page <= 10; page++) {
      const reply = (await get(sim, LIST, { page })).json as { data: Array<{ _id: string }> };
      expect(reply.data).toHaveLength(page === 10 ? 5 : 10);
      seen.push(...reply.data.map((b) => b._id));
    }
    expect(seen).toEqual(sim.allFull().map((b) => b._id));
  });
});

describe("mutations", () => {
  it("serves inserts as the newest bookings", async () => {
    const sim = await start({ bookings: 50 });
    expect(sim.insert(3)).toEqual([50, 51, 52]);
    const page = await feedPage(sim, { limit: 4 });
    expect(page.bookings.map((b) => b._id)).toEqual(idsOf(sim, [52, 51, 50, 49]));
    expect(Date.parse(page.bookings[2]?.createdAt ?? "")).toBeGreaterThan(
      Date.parse(page.bookings[3]?.createdAt ?? ""),
    );
    expect((await get(sim, LIST)).json).toMatchObject({ pagination: { total: 53 } });
  });

  it("hides late arrivals until released, then serves them at their old place", async () => {
    const sim = await start({ bookings: 50, hidden: [10, 11] });
    const before = ids(await walkFeed(sim, { limit: 20 }));
    expect(before).toHaveLength(48);
    expect(before).not.toContain(sim.dataset.full(10)._id);
    sim.release([10]);
    const after = ids(await walkFeed(sim, { limit: 20 }));
    expect(after).toEqual(
      idsOf(
        sim,
        Array.from({ length: 50 }, (_, k) => 49 - k).filter((i) => i !== 11),
      ),
    );
    expect((await get(sim, LIST)).json).toMatchObject({ pagination: { total: 49 } });
  });

  it("serves an update in both views: paid flipped, states moved, total re-priced, updatedAt now", async () => {
    let clock = NOW;
    const sim = await start({ bookings: 20, now: () => clock });
    const [before] = (await feedPage(sim, { limit: 1 })).bookings;
    clock = NOW + 5_000;
    expect(sim.update(19)).toBe(1);
    const [after] = (await feedPage(sim, { limit: 1 })).bookings;
    expect(after?._id).toBe(before?._id);
    expect(after?.paid).toBe(!before?.paid);
    expect(after?.bookingState).not.toBe(before?.bookingState);
    expect(after?.orderState).not.toBe(before?.orderState);
    expect(after?.totalAmount).toBeCloseTo((before?.totalAmount ?? 0) + 250, 2);
    const full = ((await get(sim, LIST, { pageSize: 1 })).json as { data: Array<Record<string, unknown>> })
      .data[0];
    expect(full).toMatchObject({ _id: before?._id, paid: after?.paid, __v: 1 });
    expect(full?.updatedAt).toBe(new Date(NOW + 5_000).toISOString());
  });

  it("stops serving a removed booking", async () => {
    const sim = await start({ bookings: 20 });
    sim.remove(19);
    expect((await feedPage(sim, { limit: 1 })).bookings[0]?._id).toBe(sim.dataset.full(18)._id);
    expect((await get(sim, LIST)).json).toMatchObject({ pagination: { total: 19 } });
  });
});

describe("determinism", () => {
  it("answers the same bytes for the same seed, and different ones for another seed", async () => {
    const options = { bookings: 500, seed: 9, tieRun: 3 };
    const [a, b, c] = await Promise.all([start(options), start(options), start({ ...options, seed: 10 })]);
    const cursor = (await feedPage(a, { limit: 50 })).nextCursor ?? "";
    for (const [path, params] of [
      [FEED, { limit: 25, cursor }],
      [LIST, { page: 3, pageSize: 20 }],
    ] as const) {
      const [ra, rb, rc] = await Promise.all([
        get(a, path, params),
        get(b, path, params),
        get(c, path, params),
      ]);
      expect(ra.status).toBe(200);
      expect(rb.text).toBe(ra.text);
      expect(rc.text).not.toBe(ra.text);
    }
  });
});
