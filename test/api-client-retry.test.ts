/**
 * The API client against real HTTP, scripted answer by answer: what is retried, how long it
 * waits, and how it gives up. Waits are measured from the server's own arrival timestamps, never
 * with sleeps.
 */
import { afterEach, describe, expect, it } from "vitest";
import { backoffMs, parseRetryAfter } from "../src/api/retry.js";
import {
  type Answer,
  client,
  closeServers,
  drop,
  errorBody,
  failure,
  hang,
  html,
  json,
  okFeed,
  raw,
  serve,
} from "./support/scripted-server.js";

afterEach(closeServers);

describe("retries", () => {
  it("503 twice then 200 succeeds with attempts = 3", async () => {
    const srv = await serve(json(503, errorBody(503, "busy")), raw(503, ""), okFeed);
    const { api, events, lines } = client(srv.baseUrl);
    const page = await api.fetchRecent({ limit: 10 });
    expect(page.attempts).toBe(3);
    expect(page.records).toHaveLength(1);
    expect(events.map((e) => [e.outcome, e.status, e.attempt])).toEqual([
      ["retry", 503, 1],
      ["retry", 503, 2],
      ["ok", 200, 3],
    ]);
    expect(lines).toHaveLength(2);
    // Each retry at warn, with its cause and wait, so a struggling source is not silent.
    expect(JSON.parse(lines[0] ?? "{}")).toMatchObject({
      level: "warn",
      endpoint: "fetch-recent-bookings",
      attempt: 1,
      status: 503,
      cause: "fetch-recent-bookings: HTTP 503 Service Unavailable: busy",
      waitMs: expect.any(Number),
    });
  });

  it("persistent 503 ends in a clear ApiError after maxRetries + 1 attempts", async () => {
    const srv = await serve(raw(503, ""));
    const err = await failure(client(srv.baseUrl, { maxRetries: 2 }).api.fetchRecent({ limit: 10 }));
    expect(err.message).toBe("fetch-recent-bookings: HTTP 503 Service Unavailable (after 3 attempts)");
    expect(err).toMatchObject({ status: 503, retryable: true, attempts: 3 });
    expect(srv.hits).toHaveLength(3);
  });

  it("honours Retry-After in seconds", async () => {
    const srv = await serve(json(429, errorBody(429, "slow down"), { "retry-after": "1" }), okFeed);
    const { api, lines } = client(srv.baseUrl);
    expect((await api.fetchRecent({ limit: 10 })).attempts).toBe(2);
    const gap = (srv.hits[1]?.at ?? 0) - (srv.hits[0]?.at ?? 0);
    expect(gap).toBeGreaterThanOrEqual(950);
    expect(gap).toBeLessThan(10_000);
    expect(JSON.parse(lines[0] ?? "{}")).toMatchObject({ status: 429, waitMs: 1000 });
  });

  it("honours Retry-After as an HTTP date, capped at maxRetryAfterMs", async () => {
    const inAnHour = new Date(Date.now() + 3_600_000).toUTCString();
    const srv = await serve(json(429, errorBody(429, "later"), { "retry-after": inAnHour }), okFeed);
    const { api, lines } = client(srv.baseUrl, { maxRetryAfterMs: 300 });
    expect((await api.fetchRecent({ limit: 10 })).attempts).toBe(2);
    const gap = (srv.hits[1]?.at ?? 0) - (srv.hits[0]?.at ?? 0);
    expect(gap).toBeGreaterThanOrEqual(280);
    expect(JSON.parse(lines[0] ?? "{}")).toMatchObject({ waitMs: 300 });
  });

  it("parses Retry-After and computes full-jitter backoff", () => {
    const now = Date.parse("2024-05-01T10:00:00Z");
    expect(parseRetryAfter("7", now)).toBe(7000);
    expect(parseRetryAfter("Wed, 01 May 2024 10:00:05 GMT", now)).toBe(5000);
    expect(parseRetryAfter("Wed, 01 May 2024 09:00:00 GMT", now)).toBe(0);
    expect(parseRetryAfter("soon", now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
    const policy = {
      maxRetries: 5,
      minBackoffMs: 500,
      maxBackoffMs: 3000,
      maxRetryAfterMs: 0,
      random: () => 0.999,
    };
    expect([1, 2, 3, 4, 5].map((r) => backoffMs(r, policy))).toEqual([500, 999, 1998, 2997, 2997]);
    expect(backoffMs(3, { ...policy, random: () => 0 })).toBe(0);
  });

  it.each([
    [
      "an HTML page on 502",
      html(502),
      "list-bookings: expected JSON, got text/html (502 Bad Gateway page) (after 3 attempts)",
    ],
    [
      "an HTML page on 200",
      html(200),
      "list-bookings: expected JSON, got text/html (200 OK) (after 3 attempts)",
    ],
    [
      "an empty 200",
      raw(200, ""),
      "list-bookings: expected JSON, got an empty body (200 OK) (after 3 attempts)",
    ],
    [
      "a cut-off 200",
      raw(200, '{"success":true,"data":[{"_id":"b1"'),
      "list-bookings: body is not valid JSON",
    ],
    [
      "a 200 with one record corrupt",
      raw(
        200,
        '{"success":true,"data":[{"_id":"b1"}, {"_id":"b2",}],"pagination":{"total":2,"page":1,"pageSize":10,"totalPages":1}}',
      ),
      "list-bookings: body is not valid JSON (cut off or corrupt, 116 chars)",
    ],
    [
      "a 200 of the wrong shape",
      json(200, { success: true, data: {} }),
      "list-bookings: unexpected response shape",
    ],
  ])("retries %s and, when it persists, says so", async (_name, bad, message) => {
    const srv = await serve(bad);
    const err = await failure(
      client(srv.baseUrl, { maxRetries: 2 }).api.listBookings({ page: 1, pageSize: 10 }),
    );
    expect(err.message).toContain(message);
    expect(err).toMatchObject({ retryable: true, attempts: 3 });
    expect(srv.hits).toHaveLength(3);
  });

  it("retries HTML, empty, cut-off and mis-shaped bodies until a good one", async () => {
    const srv = await serve(
      html(200),
      raw(200, ""),
      raw(200, '{"success":tr'),
      json(200, { success: true }),
      okFeed,
    );
    const page = await client(srv.baseUrl).api.fetchRecent({ limit: 10 });
    expect(page.attempts).toBe(5);
    expect(page.records[0]?.ok).toBe(true);
  });

  it("retries a body cut off by a dropped connection", async () => {
    const cut: Answer = (_req, res) => {
      res.writeHead(200, { "content-type": "application/json", "content-length": "5000" });
      res.write('{"success":true,"data":{"bookings":[');
      setImmediate(() => res.socket?.destroy());
    };
    const srv = await serve(cut, okFeed);
    const { api, events } = client(srv.baseUrl);
    expect((await api.fetchRecent({ limit: 10 })).attempts).toBe(2);
    // No status: the transport failed mid-body, rather than a complete body failing to parse.
    expect(events[0]).toMatchObject({ outcome: "retry", status: undefined });
  });

  it("retries a dropped connection and, when persistent, fails with no status", async () => {
    const srv = await serve(drop, okFeed);
    expect((await client(srv.baseUrl).api.fetchRecent({ limit: 10 })).attempts).toBe(2);
    const always = await serve(drop);
    const err = await failure(client(always.baseUrl, { maxRetries: 1 }).api.fetchRecent({ limit: 10 }));
    expect(err).toMatchObject({ status: undefined, retryable: true, attempts: 2 });
    expect(err.message).toMatch(/^fetch-recent-bookings: .*\(after 2 attempts\)$/);
  });

  it("retries a timeout", async () => {
    const srv = await serve(hang, okFeed);
    const { api, events } = client(srv.baseUrl, { timeoutMs: 300 });
    expect((await api.fetchRecent({ limit: 10 })).attempts).toBe(2);
    expect(events[0]).toMatchObject({ outcome: "retry", status: undefined });
    expect(events[0]?.durationMs).toBeGreaterThanOrEqual(250);
  });
});
