/**
 * A page over the response-body cap is read again in smaller pages, so the one record that makes it
 * so costs only itself: the real client against the hostile server over real HTTP, with one booking
 * that carries a huge field in both endpoints on every request.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createApiClient } from "../src/api/client.js";
import { RecordKeys } from "../src/api/record-keys.js";
import type { Checked } from "../src/sync/ports.js";
import { memoryLogger } from "./support/fakes.js";
import {
  formatTime,
  type HostileServer,
  type StreamLog,
  startHostileServer,
} from "./support/hostile-server.js";

const MB = 1024 * 1024;

let server: HostileServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** The hostile source with booking `hugeIndex` carrying `hugeBytes`, and a client capped at 1 MB. */
async function world(hugeIndex: number, hugeBytes: number) {
  server = await startHostileServer({ seed: 5, count: 300, quirks: { hugeIndex, hugeBytes } });
  const streamed: StreamLog[] = [];
  server.events.on("streamed", (log) => streamed.push(log));
  const logger = memoryLogger();
  const api = createApiClient({
    baseUrl: server.url,
    token: server.token,
    maxBodyBytes: MB,
    maxRetries: 0,
    logger,
  });
  const huge = server.data.newestFirst().find((b) => b.index === hugeIndex);
  if (!huge) throw new Error("no such booking");
  const position = server.data.newestFirst().indexOf(huge);
  return { server, api, huge, position, streamed, logger };
}

const idOf = (r: Checked<unknown>) => r.id;

describe("a page over the body cap is read again in smaller pages", () => {
  it("list-bookings: the page asked for, every other booking whole, the huge one a stand-in of its start and size", async () => {
    const { server, api, huge, position, streamed } = await world(250, 3 * MB);
    const page = Math.floor(position / 100) + 1;
    const read = await api.listBookings({ page, pageSize: 100 });
    const want = server.data
      .newestFirst()
      .slice((page - 1) * 100, page * 100)
      .map((b) => b.id);
    expect(read.records.map(idOf)).toEqual(want);
    expect({ page: read.page, pageSize: read.pageSize, total: read.total }).toEqual({
      page,
      pageSize: 100,
      total: 300,
    });
    const standIn = read.records[position % 100] as Checked<unknown>;
    expect(standIn.id).toBe(huge.id);
    expect(JSON.stringify(standIn).length, "no part of the huge field is kept whole").toBeLessThan(64 * 1024);
    // Pages of 100, 50, 25, 5 and 1 over the cap (each cut there), then the stand-in read to its end.
    expect(streamed.length).toBe(6);
    expect(read.attempts).toBeGreaterThan(10);
    for (const r of read.records) if (r.id !== huge.id) expect(r.ok, `${r.id}`).toBe(true);
  });

  it("the feed: the same cursor with half the limit, until the huge one is a page of its own", async () => {
    const { server, api, huge, position } = await world(250, 3 * MB);
    const seen: string[] = [];
    let cursor: string | undefined;
    // The walk's way: the next cursor from the page's last record (no anchor needed: times are unique).
    for (let guard = 0; guard < 50 && seen.length < 300; guard++) {
      const page = await api.fetchRecent({ limit: 100, cursor });
      const last = page.records.at(-1);
      if (!last) break;
      seen.push(...page.records.map(idOf).filter((id): id is string => id !== null));
      cursor = last.createdAt ?? undefined;
    }
    const want = server.data.newestFirst().map((b) => b.id);
    expect(seen).toEqual(want);
    expect(seen[position]).toBe(huge.id);
  });

  it("memory stays bounded: a 200 MB record is read to a bound, never whole, and still stands in", async () => {
    const { api, huge, position, streamed } = await world(250, 200 * MB);
    const before = process.memoryUsage().rss;
    const page = Math.floor(position / 100) + 1;
    const read = await api.listBookings({ page, pageSize: 100 });
    expect(read.records[position % 100]?.id).toBe(huge.id);
    // Its pagination comes after the record, past the bound: the total is a neighbour's.
    expect(read.total).toBe(300);
    expect(streamed.every((s) => !s.complete)).toBe(true);
    const feed = await api.fetchRecent({ limit: 1, cursor: formatTime(huge.trueUs + 1000, "ms") });
    expect(feed.records.map(idOf)).toContain(huge.id);
    expect(feed.hasMore).toBe(true);
    expect(process.memoryUsage().rss - before).toBeLessThan(100 * MB);
  });
});

describe("a stand-in's top-level _id and createdAt (a heuristic over a cut-short text)", () => {
  it.each([
    [
      "the record's own, after a nested createdAt",
      '{"items":[{"createdAt":"2025-01-01T00:00:00Z"}],"_id":"a1","createdAt":"2026-02-01T00:00:00Z","x":"',
      { _id: "a1", createdAt: "2026-02-01T00:00:00Z" },
    ],
    ["none yet when cut short before them", '{"sender":{"_id":"s9","createdAt":"2025', {}],
    [
      "a string holding quotes, braces and colons is no key",
      '{"note":"\\"_id\\": {[","_id":"b2"',
      { _id: "b2" },
    ],
    [
      "a value with an escape is left out, as the record checks leave it out",
      '{"_id":"c\\u0033","createdAt":"2026-01-01T00:00:00Z"}',
      { createdAt: "2026-01-01T00:00:00Z" },
    ],
  ])("%s", (_name, text, want) => {
    const keys = new RecordKeys(["data"]);
    keys.push(`{"data":[${text}`);
    expect(keys.found).toEqual(want);
  });
});
