/** Each injected fault of the simulator produces what it says, over real HTTP. */
import { describe, expect, it } from "vitest";
import { checkRecord } from "../src/api/response.js";
import { summaryBookingSchema } from "../src/api/schemas.js";
import { PROXY_502_HTML } from "../src/simulator/index.js";
import { AUTH, FEED, type FeedData, feedPage, get, LIST, NOW, useSimulators } from "./support/sim-http.js";

const start = useSimulators();

describe("transport faults", () => {
  it("answers 5xx as an error envelope or an empty body", async () => {
    const sim = await start({ bookings: 30 });
    sim.inject([{ kind: "5xx", status: 500 }, { kind: "5xx", status: 502, body: "empty" }, { kind: "5xx" }]);
    const first = await get(sim, FEED);
    expect(first.status).toBe(500);
    expect(first.json).toEqual({
      success: false,
      status: 500,
      message: "Internal server error",
      timestamp: new Date(NOW).toISOString(),
    });
    const second = await get(sim, FEED);
    expect([second.status, second.text]).toEqual([502, ""]);
    expect((await get(sim, FEED)).status).toBe(503);
    expect((await get(sim, FEED)).status).toBe(200);
  });

  it("answers 429 with Retry-After in seconds or as an HTTP date", async () => {
    const sim = await start({ bookings: 30 });
    sim.inject([
      { kind: "429", retryAfter: 2 },
      { kind: "429", retryAfter: 3, format: "date" },
      { kind: "429", retryAfter: null },
    ]);
    const seconds = await get(sim, FEED);
    expect([seconds.status, seconds.headers.get("retry-after")]).toEqual([429, "2"]);
    expect(seconds.json).toMatchObject({ success: false, status: 429 });
    const date = await get(sim, FEED);
    expect(date.headers.get("retry-after")).toBe(new Date(NOW + 3_000).toUTCString());
    const none = await get(sim, FEED);
    expect([none.status, none.headers.get("retry-after")]).toEqual([429, null]);
  });

  it("answers a proxy's 502 HTML page", async () => {
    const sim = await start({ bookings: 30 });
    sim.inject({ kind: "html" });
    const reply = await get(sim, LIST);
    expect(reply.status).toBe(502);
    expect(reply.headers.get("content-type")).toBe("text/html");
    expect(reply.text).toBe(PROXY_502_HTML);
    expect(reply.json).toBeUndefined();
  });

  it("answers 401 mid-run even with the right token", async () => {
    const sim = await start({ bookings: 30 });
    sim.inject({ kind: "401" });
    expect((await get(sim, FEED)).status).toBe(401);
    expect((await get(sim, FEED)).status).toBe(200);
  });

  it("drops the connection without an answer, then serves the next request", async () => {
    const sim = await start({ bookings: 30 });
    sim.inject({ kind: "drop" });
    await expect(fetch(sim.url + FEED, { headers: AUTH })).rejects.toThrow();
    expect((await get(sim, FEED)).status).toBe(200);
    expect(sim.stats.byStatus).toEqual({ dropped: 1, "200": 1 });
  });

  it("cuts a 200 body mid-way, with a Content-Length that matches the cut", async () => {
    const sim = await start({ bookings: 30 });
    const whole = await get(sim, FEED, { limit: 20 });
    sim.inject({ kind: "truncated" });
    const cut = await get(sim, FEED, { limit: 20 });
    expect(cut.status).toBe(200);
    expect(cut.headers.get("content-length")).toBe(String(Buffer.byteLength(cut.text)));
    expect(cut.json).toBeUndefined();
    expect(cut.text.length).toBeGreaterThan(100);
    expect(whole.text.startsWith(cut.text)).toBe(true);
  });

  it("cuts a 200 body mid-way by closing the socket, so reading the body fails", async () => {
    const sim = await start({ bookings: 30 });
    sim.inject({ kind: "truncated", mode: "close" });
    const res = await fetch(sim.url + LIST, { headers: AUTH });
    expect(res.status).toBe(200);
    await expect(res.text()).rejects.toThrow();
  });

  it("delays an answer with the slow fault and with latencyMs", async () => {
    const sim = await start({ bookings: 30 });
    sim.inject({ kind: "slow", ms: 150 });
    let t = performance.now();
    expect((await get(sim, FEED)).status).toBe(200);
    expect(performance.now() - t).toBeGreaterThanOrEqual(140);
    sim.behave({ latencyMs: 120 });
    t = performance.now();
    expect((await get(sim, LIST)).status).toBe(200);
    expect(performance.now() - t).toBeGreaterThanOrEqual(110);
  });
});

describe("data faults", () => {
  it("makes the first records of a page invalid and leaves the rest valid: only the keyless one is no booking", async () => {
    const sim = await start({ bookings: 30 });
    sim.inject({ kind: "malformed", count: 3 }, { path: "feed" });
    const page = await feedPage(sim, { limit: 10 });
    const results = page.bookings.map((b) => checkRecord(summaryBookingSchema, b));
    // The keyless record cannot be a booking; a bad amount costs its column; a bad time steers nothing.
    expect(results.map((r) => r.ok)).toEqual([false, true, false, true, true, true, true, true, true, true]);
    expect(results[0]).toMatchObject({ ok: false, id: null });
    expect(results[0]).not.toHaveProperty("booking");
    expect(results[1]).toMatchObject({ ok: true, problems: [expect.stringMatching(/^totalAmount: /)] });
    expect(results[1]?.ok && results[1].record.totalAmount).toBeUndefined();
    expect(results[2]).toMatchObject({ ok: false, booking: { _id: expect.any(String) } });
    const raw = page.bookings as unknown as Array<Record<string, unknown>>;
    expect(raw[0]).not.toHaveProperty("_id");
    expect(typeof raw[1]?.totalAmount).toBe("string");
    expect(raw[2]?.createdAt).toBe("not-a-date");
    expect(page.nextCursor).toBe(sim.dataset.full(20).createdAt);
  });

  it("answers an empty page that claims hasMore", async () => {
    const sim = await start({ bookings: 30 });
    const cursor = sim.dataset.full(15).createdAt;
    sim.inject({ kind: "hasMoreOnEmpty" });
    expect(await feedPage(sim, { cursor })).toEqual({ bookings: [], nextCursor: cursor, hasMore: true });
  });

  it("answers a real page whose nextCursor is the request's cursor", async () => {
    const sim = await start({ bookings: 30 });
    const cursor = sim.dataset.full(15).createdAt;
    sim.inject({ kind: "stuckCursor" });
    const page = await feedPage(sim, { cursor, limit: 5 });
    expect(page.bookings.map((b) => b._id)).toEqual([14, 13, 12, 11, 10].map((i) => sim.dataset.full(i)._id));
    expect([page.nextCursor, page.hasMore]).toEqual([cursor, true]);
  });
});

describe("fault queue, rate and observation", () => {
  it("serves queued faults in order to the targeted endpoint only, repeated `times`", async () => {
    const sim = await start({ bookings: 30 });
    sim.inject([{ kind: "429" }, { kind: "5xx", status: 500 }], { path: "list", times: 2 });
    expect((await get(sim, FEED)).status).toBe(200);
    const statuses: number[] = [];
    for (let k = 0; k < 5; k++) statuses.push((await get(sim, LIST)).status);
    expect(statuses).toEqual([429, 500, 429, 500, 200]);
    // Feed-only kinds default to the feed, so a list request does not consume them.
    sim.inject({ kind: "stuckCursor" });
    expect((await get(sim, LIST)).status).toBe(200);
    expect((await feedPage(sim)).nextCursor).toBeNull();
  });

  it("draws random faults from a seeded rate: same seed, same sequence", async () => {
    const statusesFor = async (faultSeed: number): Promise<Array<number | string>> => {
      const sim = await start({
        bookings: 30,
        faultRate: 0.5,
        faultKinds: ["5xx", "429", "html"],
        faultSeed,
      });
      const out: Array<number | string> = [];
      for (let k = 0; k < 30; k++) out.push((await get(sim, FEED)).status);
      return out;
    };
    const [a, b, c] = [await statusesFor(4), await statusesFor(4), await statusesFor(5)];
    expect(b).toEqual(a);
    expect(c).not.toEqual(a);
    expect(a.filter((s) => s === 200).length).toBeGreaterThan(5);
    expect(a.filter((s) => s !== 200).length).toBeGreaterThan(5);
    expect(a.every((s) => [200, 500, 502, 503, 429].includes(s as number))).toBe(true);
  });

  it("counts requests by endpoint, status and fault, and emits request events", async () => {
    const sim = await start({ bookings: 30 });
    sim.inject({ kind: "html" }, { path: "feed" });
    const seen = sim.nextRequest((e) => e.endpoint === "feed");
    await get(sim, FEED);
    expect(await seen).toMatchObject({ endpoint: "feed", method: "GET", status: 502, fault: "html" });
    const dropped = sim.nextRequest((e) => e.status === "dropped");
    sim.inject({ kind: "drop" }, { path: "list" });
    await expect(fetch(sim.url + LIST, { headers: AUTH })).rejects.toThrow();
    expect(await dropped).toMatchObject({ endpoint: "list", fault: "drop" });
    await get(sim, LIST, {}, {});
    await get(sim, "/elsewhere");
    expect(sim.stats).toEqual({
      requests: 4,
      byEndpoint: { feed: 1, list: 2, other: 1 },
      byStatus: { "502": 1, dropped: 1, "401": 1, "404": 1 },
      byFault: { html: 1, drop: 1 },
    });
    sim.resetStats();
    expect(sim.stats.requests).toBe(0);
  });

  it("switches the cursor rule at runtime", async () => {
    const sim = await start({ bookings: 8, tieRun: 4 });
    const first = await feedPage(sim, { limit: 2 });
    const exclusive = await feedPage(sim, { limit: 2, cursor: first.nextCursor ?? "" });
    sim.behave({ cursor: "inclusive" });
    const inclusive: FeedData = await feedPage(sim, { limit: 2, cursor: first.nextCursor ?? "" });
    expect(exclusive.bookings.map((b) => b._id)).toEqual([3, 2].map((i) => sim.dataset.full(i)._id));
    expect(inclusive.bookings.map((b) => b._id)).toEqual([7, 6].map((i) => sim.dataset.full(i)._id));
    expect(sim.behaviour.cursor).toBe("inclusive");
  });
});
