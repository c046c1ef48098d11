/** The simulator's cache of serialized bookings: what it serves is always the JSON of the booking as it is now. */
import { describe, expect, it } from "vitest";
import { Dataset } from "../src/simulator/index.js";
import { RecordCache, type RecordStamp } from "../src/simulator/record-cache.js";
import { FEED, type FeedData, get, LIST, NOW, useSimulators } from "./support/sim-http.js";

const start = useSimulators();

/** Every booking's JSON, as served, against stringifying its objects. */
function expectCurrentJson(d: Dataset): void {
  for (let i = 0; i < d.size; i++) {
    expect(d.json("full", i).toString()).toBe(JSON.stringify(d.full(i)));
    expect(d.json("summary", i).toString()).toBe(JSON.stringify(d.summary(i)));
  }
}

describe("record JSON cache", () => {
  it.each([
    ["the default budget", undefined],
    ["no cache", 0],
    ["a budget for a few records", 20_000],
  ])("follows updates, timing changes and inserts, with %s", (_, recordCacheBytes) => {
    let clock = NOW;
    const d = new Dataset({ bookings: 60, now: () => clock, recordCacheBytes });
    expectCurrentJson(d);
    expectCurrentJson(d);
    clock += 1_000;
    d.update(5);
    d.update(59);
    clock += 1_000;
    d.update(5);
    expectCurrentJson(d);
    d.setTiming({ tieRun: 4, spacingMs: 500 });
    expectCurrentJson(d);
    d.insert(3);
    expectCurrentJson(d);
  });

  it("holds at most its budget, keeping what came first and making the rest each time", () => {
    const cache = new RecordCache(10_000);
    const stamp: RecordStamp = { version: 0, createdAtMs: 0, updatedAtMs: undefined };
    for (let i = 0; i < 100; i++) {
      const text = JSON.stringify({ i, pad: "é".repeat(250) });
      expect(cache.json("full", i, stamp, () => text).toString()).toBe(text);
    }
    expect(cache.bytes).toBeLessThanOrEqual(10_000);
    let made = 0;
    const make = () => {
      made++;
      return "{}";
    };
    expect(cache.json("full", 0, stamp, make).toString()).toContain('"i":0');
    expect(made).toBe(0);
    expect(cache.json("full", 99, stamp, make).toString()).toBe("{}");
    expect(made).toBe(1);
  });

  it("keeps the two views apart and remakes an entry whose stamp changed", () => {
    const cache = new RecordCache(1 << 20);
    const stamp: RecordStamp = { version: 0, createdAtMs: 1_000, updatedAtMs: undefined };
    expect(cache.json("full", 1, stamp, () => '"full"').toString()).toBe('"full"');
    expect(cache.json("summary", 1, stamp, () => '"summary"').toString()).toBe('"summary"');
    expect(cache.json("full", 1, stamp, () => '"again"').toString()).toBe('"full"');
    for (const changed of [{ version: 1 }, { createdAtMs: 2_000 }, { updatedAtMs: 1_000 }]) {
      const next = { ...stamp, ...changed };
      expect(cache.json("full", 1, next, () => JSON.stringify(changed)).toString()).toBe(
        JSON.stringify(changed),
      );
    }
  });

  it("answers pages served again, and after an update, with the records' current JSON", async () => {
    let clock = NOW;
    const sim = await start({ bookings: 30, now: () => clock });
    const list = await get(sim, LIST, { pageSize: 30 });
    const feed = await get(sim, FEED, { limit: 30 });
    expect((await get(sim, LIST, { pageSize: 30 })).text).toBe(list.text);
    expect((await get(sim, FEED, { limit: 30 })).text).toBe(feed.text);
    clock += 5_000;
    sim.update(29);
    sim.update(3);
    const timestamp = new Date(clock).toISOString();
    expect((await get(sim, LIST, { pageSize: 30 })).text).toBe(
      JSON.stringify({ ...(list.json as object), data: sim.allFull(), timestamp }),
    );
    const feedJson = feed.json as { data: FeedData };
    expect((await get(sim, FEED, { limit: 30 })).text).toBe(
      JSON.stringify({ ...feedJson, data: { ...feedJson.data, bookings: sim.allSummaries() }, timestamp }),
    );
  });
});
