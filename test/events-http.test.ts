/**
 * GET /events on the daemon's real HTTP endpoint (127.0.0.1, port 0) over an in-memory events
 * port: the token and loopback rules of POST /sync, the query's bounds (400 with a reason), and the
 * long poll: answered by a commit's notify (a test clock holds the 1 s poll and the deadline, so
 * only the notify can answer), by its deadline, and at once when the server stops. Then the daemon
 * (the build, as a subprocess) serving what its syncs commit.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createHealth } from "../src/daemon/health.js";
import { startHttpServer } from "../src/daemon/http.js";
import { createMetrics } from "../src/daemon/metrics.js";
import { servedEvent } from "../src/events/message.js";
import type { Logger } from "../src/sync/ports.js";
import { closedAfterEach, freePort, http, requestAsHost, spawnDaemon } from "./support/daemon-process.js";
import { fixedClock } from "./support/fakes.js";
import { harness } from "./support/harness.js";
import { MEMORY_STREAM, memoryEventStore, watchedNotifier } from "./support/memory-event-store.js";

const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {} };
const TOKEN = "evt-7f3a-distinctive-secret";
const TRIGGER = "trg-90d2-distinctive-secret";
const REFUSAL =
  "GET /events is refused: the endpoint listens on 0.0.0.0, beyond loopback, and no events token is set; " +
  "set EVENTS_TOKEN or EVENTS_TOKEN_FILE";

const started = closedAfterEach();

/** The real endpoint on `host` serving a fresh in-memory stream; its loopback URL and its parts. */
async function endpoint(host = "127.0.0.1", token?: string) {
  const store = memoryEventStore();
  const notifier = watchedNotifier();
  const clock = fixedClock(Date.parse("2026-11-27T10:00:00.000Z"));
  const server = await startHttpServer({
    host,
    port: 0,
    health: createHealth({ readyMaxAgeSeconds: 60 }),
    registry: createMetrics({ processMetrics: false }).registry,
    trigger: () => ({ accepted: true, coalesced: false }),
    events: { store, notifier, clock, token },
    logger: quiet,
  });
  started.servers.push(server);
  const url = `http://127.0.0.1:${server.port}`;
  const get = (query = "", headers: Record<string, string> = {}) =>
    http(`${url}/events${query}`, { headers });
  return { server, url, store, notifier, clock, get };
}

describe("GET /events: a page", () => {
  it("serves the stored bytes with each id first, `last` to ask after next; limit defaults to 100", async () => {
    const { store, get } = await endpoint();
    store.append(...Array.from({ length: 150 }, (_, i) => ({ bookingId: `B-${i}` })));
    const served = (from: number, to: number) =>
      store.rows
        .filter((r) => r.id >= from && r.id <= to)
        .map(servedEvent)
        .join(",");
    const tail = `"first":1,"stream":"${MEMORY_STREAM}"`;
    const first = await get();
    expect(first.status).toBe(200);
    expect(first.text).toBe(`{"events":[${served(1, 100)}],"last":100,${tail}}`);
    expect((await get("?after=100&limit=7")).text).toBe(
      `{"events":[${served(101, 107)}],"last":107,${tail}}`,
    );
    expect((await get(`?after=140&limit=1000&stream=${MEMORY_STREAM}`)).text).toBe(
      `{"events":[${served(141, 150)}],"last":150,${tail}}`,
    );
    // At the end, and without a wait: at once, empty, `last` = after.
    expect((await get("?after=150&wait=0s")).text).toBe(`{"events":[],"last":150,${tail}}`);
  });

  it("refuses (409) a place that cannot be in this stream, at once, saying to read again from 0", async () => {
    const { store, get, notifier } = await endpoint();
    store.append({}, {}, {});
    const again = "read again from after 0";
    // Past every id this stream has given: the consumer read another, now gone, mirror's stream.
    const beyond = await get("?after=900&wait=60s");
    expect(beyond.status).toBe(409);
    expect(beyond.json).toEqual({
      error: expect.stringMatching(/^after 900 is beyond the newest event id this mirror has given, 3: /),
      first: 1,
      stream: MEMORY_STREAM,
    });
    expect(String(beyond.json?.error)).toContain(again);
    const other = await get("?after=2&stream=5f3c0ffee5f3c0ffee5f3c0ffee5f3c0");
    expect(other.status).toBe(409);
    expect(String(other.json?.error)).toMatch(
      /^stream 5f3c0ffee5f3c0ffee5f3c0ffee5f3c0 is not this mirror's/,
    );
    expect(String(other.json?.error)).toContain(again);
    // Its own stream and a place in it: served.
    expect((await get(`?after=2&stream=${MEMORY_STREAM}`)).json?.last).toBe(3);
    expect(notifier.listening()).toBe(0);
  });

  it.each([
    ["?after=-1", "after"],
    ["?after=abc", "after"],
    ["?after=", "after"],
    ["?after=1.5", "after"],
    ["?limit=0", "limit"],
    ["?limit=1001", "limit"],
    ["?limit=ten", "limit"],
    ["?wait=61", "wait"],
    ["?wait=61s", "wait"],
    ["?wait=1.5", "wait"],
    ["?wait=30m", "wait"],
    ["?wait=s", "wait"],
    ["?since=3", "unknown parameter"],
    ["?after=1&after=2", "after is given more than once"],
    ["?stream=", "stream"],
    ["?stream=a%20b", "stream"],
    [`?stream=${"a".repeat(65)}`, "stream"],
  ])("answers 400 naming the fault for %s", async (query, word) => {
    const { get } = await endpoint();
    const res = await get(query);
    expect(res.status).toBe(400);
    expect(String(res.json?.error)).toContain(word);
  });

  it("takes wait as seconds, 30 or 30s, up to 60: with an event there it answers at once", async () => {
    const { store, get, notifier } = await endpoint();
    store.append({});
    for (const wait of ["60", "60s", "30s", "1"]) {
      const res = await get(`?wait=${wait}`);
      expect(res.status, wait).toBe(200);
      expect(res.json?.last).toBe(1);
    }
    expect(notifier.listening()).toBe(0);
  });

  it("is GET only", async () => {
    const { url } = await endpoint();
    expect((await http(`${url}/events`, { method: "POST" })).status).toBe(405);
  });
});

describe("GET /events: who may read", () => {
  it("answers without a token on a loopback bind, only to requests that name a loopback host", async () => {
    const { get, url } = await endpoint("127.0.0.1");
    expect((await get()).status).toBe(200);
    for (const host of ["localhost:8080", "127.0.0.1", "[::1]:9"])
      expect(await requestAsHost(`${url}/events`, host), host).toBe(200);
    // A page that rebound its own name to 127.0.0.1 reaches the port, with its name in Host.
    for (const host of ["rebound.example:8080", "10.0.0.5", "[::2]"])
      expect(await requestAsHost(`${url}/events`, host), host).toBe(403);
  });

  it("is refused (403, saying to set EVENTS_TOKEN) on 0.0.0.0 without a token, whatever the header", async () => {
    const { store, get, url } = await endpoint("0.0.0.0");
    store.append({});
    for (const header of [undefined, "Bearer anything"]) {
      const res = await get("", header ? { authorization: header } : {});
      expect(res.status).toBe(403);
      expect(res.json).toEqual({ error: REFUSAL });
    }
    // Refused before the query is read: no reason about the stream leaks.
    expect((await get("?limit=0")).status).toBe(403);
    expect((await http(`${url}/healthz`)).status).toBe(200);
  });

  it.each(["0.0.0.0", "127.0.0.1"])(
    "needs the token when one is set, on %s too: 401 without or wrong",
    async (host) => {
      const { store, get, url } = await endpoint(host, TOKEN);
      store.append({});
      for (const header of [undefined, "Bearer wrong", `Bearer ${TOKEN}x`, TOKEN, `Basic ${TOKEN}`]) {
        const res = await get("?limit=0", header ? { authorization: header } : {});
        expect(res.status, String(header)).toBe(401);
        expect(res.text).not.toContain(TOKEN);
      }
      const raw = await fetch(`${url}/events`);
      expect(raw.headers.get("www-authenticate")).toBe("Bearer");
      await raw.body?.cancel();
      const ok = await get("", { authorization: `Bearer ${TOKEN}` });
      expect(ok.status).toBe(200);
      expect(ok.json?.last).toBe(1);
      expect((await get("?limit=0", { authorization: `bearer ${TOKEN}` })).status).toBe(400);
    },
  );
});

describe("GET /events: the long poll", () => {
  it("is answered as soon as this process commits an event (its notify), not by the poll or the deadline", async () => {
    const { store, notifier, clock, get } = await endpoint();
    store.append({});
    const listening = notifier.subscribed();
    const answer = get("?after=1&wait=30s&limit=5");
    await listening;
    store.append({ bookingId: "B-late" }, { bookingId: "B-later" });
    notifier.notify();
    const res = await answer;
    expect(res.status).toBe(200);
    expect(
      ((res.json?.events ?? []) as Array<{ id: number; bookingId: string }>).map((e) => [e.id, e.bookingId]),
    ).toEqual([
      [2, "B-late"],
      [3, "B-later"],
    ]);
    expect(res.json?.last).toBe(3);
    // The test clock never moved: neither the 1 s poll nor the 30 s deadline could have answered.
    expect(clock.now().toISOString()).toBe("2026-11-27T10:00:00.000Z");
    expect(notifier.listening()).toBe(0);
  });

  it("answers an empty page when the wait ends with nothing new", async () => {
    const { store, notifier, clock, get } = await endpoint();
    store.append({}, {}, {}, {});
    const listening = notifier.subscribed();
    const answer = get("?after=4&wait=2");
    await listening;
    clock.advance(2_000);
    expect((await answer).text).toBe(`{"events":[],"last":4,"first":1,"stream":"${MEMORY_STREAM}"}`);
    expect(clock.pending()).toBe(0);
  });

  it("stops waiting when the client leaves", async () => {
    const { notifier, url } = await endpoint();
    const listening = notifier.subscribed();
    const controller = new AbortController();
    const gone = fetch(`${url}/events?wait=60`, { signal: controller.signal }).catch(() => "aborted");
    await listening;
    controller.abort();
    expect(await gone).toBe("aborted");
    await notifier.unheard();
    expect(notifier.listening()).toBe(0);
  });

  it("ends at once, with an empty page, when the server stops: a stop never waits out a poll", async () => {
    const { server, notifier, get } = await endpoint();
    const listening = notifier.subscribed();
    const answer = get("?after=0&wait=60s");
    await listening;
    await server.close();
    expect((await answer).text).toBe(`{"events":[],"last":0,"first":0,"stream":"${MEMORY_STREAM}"}`);
    expect(notifier.listening()).toBe(0);
  });
});

describe("GET /events in the daemon", () => {
  it("serves what its syncs commit, behind EVENTS_TOKEN_FILE, and a long poll is answered by its next sync", async () => {
    const h = await harness({ bookings: 20 });
    started.harness = h;
    const dir = mkdtempSync(join(tmpdir(), "booking-sync-events-"));
    started.dir = dir;
    const file = join(dir, "events-token");
    writeFileSync(file, `${TOKEN}\n`);
    const port = await freePort();
    const env = { HTTP_PORT: String(port), HTTP_HOST: "0.0.0.0", SYNC_SCHEDULE: "0 0 1 1 *" };
    const d = spawnDaemon(
      h.env({ ...env, EVENTS_TOKEN_FILE: file, TRIGGER_TOKEN: TRIGGER, LOG_LEVEL: "trace" }),
    );
    started.daemons.push(d);
    const startLine = await d.waitForLog(
      (l) => String(l.msg).startsWith("booking-sync run:"),
      "the start line",
    );
    expect(startLine.events).toBe("token");
    await d.waitForLog((l) => l.msg === "sync finished", "the start-up sync");
    const url = `http://127.0.0.1:${port}`;
    const auth = { authorization: `Bearer ${TOKEN}` };
    expect((await http(`${url}/events`)).status).toBe(401);
    const page = await http(`${url}/events?limit=1000`, { headers: auth });
    expect(page.status).toBe(200);
    const events = (page.json?.events ?? []) as Array<{ id: number; type: string; bookingId: string }>;
    expect(events.map((e) => e.id)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(events.map((e) => e.bookingId).sort()).toEqual(h.mirrorIds());
    expect(page.json?.last).toBe(20);
    const polled = http(`${url}/events?after=20&wait=30s`, { headers: auth });
    h.sim.insert(3);
    // The events token is not the trigger's: each guards its own endpoint.
    expect((await http(`${url}/sync`, { method: "POST", headers: auth })).status).toBe(401);
    const trigger = { authorization: `Bearer ${TRIGGER}` };
    expect((await http(`${url}/sync`, { method: "POST", headers: trigger })).status).toBe(202);
    const answer = await polled;
    expect(answer.status).toBe(200);
    expect(((answer.json?.events ?? []) as Array<{ id: number }>).map((e) => e.id)).toEqual([21, 22, 23]);
    expect(d.stderr()).not.toContain(TOKEN);
    expect(d.stderr()).not.toContain(TRIGGER);
  });
});
