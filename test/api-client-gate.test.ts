/**
 * The API client's bound on requests in flight and its shared pause, against real HTTP: the server
 * holds answers until the test lets them go, and every claim is read from its arrivals, never from sleeps.
 */
import type http from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { RequestGate } from "../src/api/gate.js";
import { isAbortError } from "../src/errors.js";
import {
  type Answer,
  client,
  closeServers,
  errorBody,
  feed,
  json,
  okFeed,
  serve,
  summary,
} from "./support/scripted-server.js";

afterEach(closeServers);

/**
 * An answer that holds each response until `answerOldest` lets the oldest one go, and counts those
 * open; a request with cursor "probe" is answered at once (see `probe`).
 */
function holding() {
  const open: http.ServerResponse[] = [];
  const state = { open, maxOpen: 0 };
  const answer: Answer = (req, res) => {
    if (req.url?.includes("cursor=probe")) return okFeed(req, res);
    open.push(res);
    state.maxOpen = Math.max(state.maxOpen, open.length);
  };
  const answerOldest = () => {
    const res = open.shift();
    res?.writeHead(200, { "content-type": "application/json" });
    res?.end(JSON.stringify(feed([summary(1)])));
  };
  return { answer, state, answerOldest };
}

/** Resolves on the next turn of the event loop. */
const turn = () => new Promise((r) => setImmediate(r));

describe("maxInFlight", () => {
  it.each([1, 3])(
    "keeps at most %i requests in flight with three times as many callers, first come first served",
    async (n) => {
      const held = holding();
      const srv = await serve(held.answer);
      const { api } = client(srv.baseUrl, { maxInFlight: n });
      const callers = Array.from({ length: 3 * n }, (_, i) =>
        api.fetchRecent({ limit: 10, cursor: `c${i}` }),
      );
      await srv.hitCount(n);
      // A request of another client, asked for after all 3n: whatever this client had sent by then
      // reaches the server before it (over the bound, all 3n would have).
      await client(srv.baseUrl).api.fetchRecent({ limit: 10, cursor: "probe" });
      expect(held.state.open).toHaveLength(n);
      // Then one answer each time the client has filled every slot again (or sent all that remain).
      for (let answered = 0; answered < 3 * n; answered++) {
        await srv.hitCount(1 + Math.min(3 * n, answered + n));
        await turn();
        held.answerOldest();
      }
      await Promise.all(callers);
      expect(held.state.maxOpen).toBe(n);
      const order = srv.hits.map((h) => h.url.searchParams.get("cursor")).filter((c) => c !== "probe");
      expect(new Set(order.slice(0, n))).toEqual(new Set(Array.from({ length: n }, (_, i) => `c${i}`)));
      // Past the first n, each waited its turn in the order it asked.
      expect(order.slice(n)).toEqual(Array.from({ length: 2 * n }, (_, i) => `c${n + i}`));
    },
  );

  it("an abort while queued rejects at once, and the request is never sent", async () => {
    const held = holding();
    const srv = await serve(held.answer);
    const { api } = client(srv.baseUrl, { maxInFlight: 1, timeoutMs: 60_000 });
    const first = api.fetchRecent({ limit: 10, cursor: "first" });
    await srv.hitCount(1);
    const controller = new AbortController();
    const queued = api.fetchRecent({ limit: 10, cursor: "queued" }, controller.signal);
    const third = api.fetchRecent({ limit: 10, cursor: "third" });
    // Both wait in the queue, unsent (see the first test's probe), when the abort comes.
    await client(srv.baseUrl).api.fetchRecent({ limit: 10, cursor: "probe" });
    controller.abort(new Error("shutdown"));
    const err = await queued.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isAbortError(err)).toBe(true);
    expect((err as Error).message).toBe("fetch-recent-bookings: request aborted");
    held.answerOldest();
    await first;
    await srv.hitCount(3);
    held.answerOldest();
    await third;
    expect(srv.hits.map((h) => h.url.searchParams.get("cursor"))).toEqual(["first", "probe", "third"]);
  });

  it("refuses a bound below 1 or not whole", () => {
    for (const bad of [0, -1, 1.5, Number.NaN]) expect(() => new RequestGate(bad)).toThrow(RangeError);
  });
});

describe("a 429 pauses every request of the client", () => {
  /** A server whose first answer is `first`, and every later one a page; `rateLimited` resolves on the 429. */
  async function afterA429(first: Answer, options: { minBackoffMs?: number; maxBackoffMs?: number } = {}) {
    const srv = await serve(first, okFeed);
    let rateLimited: () => void = () => {};
    const seen429 = new Promise<void>((resolve) => (rateLimited = resolve));
    const { api } = client(srv.baseUrl, {
      maxInFlight: 4,
      ...options,
      onRequest: (e) => {
        if (e.status === 429) rateLimited();
      },
    });
    return { srv, api, seen429 };
  }

  it("with Retry-After: a request asked for after the 429 waits for the pause as well", async () => {
    const { srv, api, seen429 } = await afterA429(
      json(429, errorBody(429, "slow down"), { "retry-after": "1" }),
    );
    const limited = api.fetchRecent({ limit: 10, cursor: "limited" });
    await seen429;
    const others = [api.fetchRecent({ limit: 10, cursor: "b" }), api.fetchRecent({ limit: 10, cursor: "c" })];
    await Promise.all([limited, ...others]);
    const at = (i: number) => srv.hits[i]?.at ?? 0;
    expect(srv.hits).toHaveLength(4);
    // Every later send, the other callers' as well as the retry, came a second after the 429.
    for (let i = 1; i < 4; i++) expect(at(i) - at(0)).toBeGreaterThanOrEqual(950);
  });

  it("without Retry-After: the others wait out the limited request's back-off", async () => {
    // random() is 0.5 in `client`, so the first back-off is 0.5 · 800 = 400 ms.
    const { srv, api, seen429 } = await afterA429(json(429, errorBody(429, "slow down")), {
      minBackoffMs: 800,
      maxBackoffMs: 800,
    });
    const limited = api.fetchRecent({ limit: 10, cursor: "limited" });
    await seen429;
    const other = api.fetchRecent({ limit: 10, cursor: "other" });
    await Promise.all([limited, other]);
    const hit = (cursor: string) => srv.hits.filter((h) => h.url.searchParams.get("cursor") === cursor);
    const t429 = hit("limited")[0]?.at ?? 0;
    expect((hit("other")[0]?.at ?? 0) - t429).toBeGreaterThanOrEqual(380);
    expect((hit("limited")[1]?.at ?? 0) - t429).toBeGreaterThanOrEqual(380);
  });

  it("a request already in flight when the 429 comes is not held back; its next one is", async () => {
    // The second request is held until the first has been answered 429.
    let releaseSecond: () => void = () => {};
    const first: Answer = (_req, res) => {
      res.writeHead(429, { "content-type": "application/json", "retry-after": "1" });
      res.end(JSON.stringify(errorBody(429, "slow down")));
    };
    const second: Answer = (_req, res) => {
      releaseSecond = () => {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify(feed([summary(2)], "2024-05-01T10:00:02Z", true)));
      };
    };
    const srv = await serve(second, first, okFeed);
    let rateLimited: () => void = () => {};
    const seen429 = new Promise<void>((resolve) => (rateLimited = resolve));
    const { api } = client(srv.baseUrl, {
      maxInFlight: 4,
      onRequest: (e) => {
        if (e.status === 429) rateLimited();
      },
    });
    // A walker: one page, then the next at its cursor.
    const walker = api
      .fetchRecent({ limit: 10, cursor: "w1" })
      .then(() => api.fetchRecent({ limit: 10, cursor: "w2" }));
    await srv.hitCount(1);
    const limited = api.fetchRecent({ limit: 10, cursor: "limited" });
    await seen429;
    releaseSecond();
    await Promise.all([walker, limited]);
    const at = (cursor: string) => srv.hits.find((h) => h.url.searchParams.get("cursor") === cursor)?.at ?? 0;
    expect(at("w2") - at("limited")).toBeGreaterThanOrEqual(950);
  });
});
