/**
 * The API client against real HTTP, scripted answer by answer: requests, final failures, bodies over
 * the cap, abort and secrecy.
 */
import { gzipSync } from "node:zlib";
import { afterEach, describe, expect, it } from "vitest";
import { ApiError, isAbortError } from "../src/errors.js";
import { fullBooking } from "../src/simulator/bookings.js";
import {
  type Answer,
  chain,
  client,
  closeServers,
  drop,
  errorBody,
  failure,
  feed,
  hang,
  html,
  json,
  okFeed,
  raw,
  serve,
  streamed,
  summary,
  TOKEN,
} from "./support/scripted-server.js";

afterEach(closeServers);

describe("requests", () => {
  it("sends the bearer token, Accept and User-Agent, and clamps the parameters", async () => {
    const srv = await serve(
      okFeed,
      okFeed,
      json(200, { success: true, data: [], pagination: { total: 0, page: 1, pageSize: 100, totalPages: 0 } }),
    );
    const { api } = client(`${srv.baseUrl}/`);
    await api.fetchRecent({ limit: 500, cursor: "2024-05-01T10:00:00.000Z", bookingType: "IN" });
    await api.fetchRecent({ limit: 0 });
    const list = await api.listBookings({ page: -3, pageSize: 1000 });
    const [a, b, c] = srv.hits;
    expect(a?.url.pathname).toBe("/api/v2/partner/booking/fetch-recent-bookings");
    expect(a?.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(a?.headers.accept).toBe("application/json");
    expect(a?.headers["user-agent"]).toMatch(/^booking-sync\/\d+\.\d+\.\d+/);
    expect(Object.fromEntries(a?.url.searchParams ?? [])).toEqual({
      limit: "100",
      cursor: "2024-05-01T10:00:00.000Z",
      bookingType: "IN",
    });
    expect(Object.fromEntries(b?.url.searchParams ?? [])).toEqual({ limit: "1" });
    expect(c?.url.pathname).toBe("/api/v2/partner/booking/list-bookings");
    expect(Object.fromEntries(c?.url.searchParams ?? [])).toEqual({ page: "1", pageSize: "100" });
    expect(list).toMatchObject({ records: [], page: 1, pageSize: 100, total: 0, totalPages: 0, attempts: 1 });
  });

  it("reads createdAt strictly to UTC milliseconds, keeps its full precision, and never reads nextCursor", async () => {
    const srv = await serve(
      json(
        200,
        feed(
          [summary(7, "2024-05-01T12:00:07.123456+02:00"), summary(8, "2024-02-30T10:00:00Z")],
          "abc",
          true,
        ),
      ),
    );
    const page = await client(srv.baseUrl).api.fetchRecent({ limit: 10 });
    expect(page).toMatchObject({ hasMore: true, attempts: 1 });
    expect(page.records[0]).toMatchObject({
      ok: true,
      id: "b7",
      createdAt: "2024-05-01T10:00:07.123Z",
      at: "2024-05-01T10:00:07.123456000Z",
    });
    expect(page.records[1]).toMatchObject({ ok: false, id: "b8", createdAt: null });
  });

  it("checks each record on its own: a keyed one with a bad field steers still, one with a bad time is a booking that steers nothing, a keyless one is no booking", async () => {
    const { _id: _, ...noId } = summary(2);
    const records = [
      summary(1),
      noId,
      { ...summary(3), createdAt: "yesterday" },
      { ...summary(4), paid: "yes" },
      summary(5),
      { ...summary(6), _id: "x".repeat(257) },
      { ...summary(7), _id: "b\u00007" },
    ];
    const srv = await serve(json(200, feed(records)));
    const page = await client(srv.baseUrl).api.fetchRecent({ limit: 10 });
    expect(page.records.map((r) => r.ok)).toEqual([true, false, false, true, true, false, false]);
    const [longId, nulId] = page.records.slice(5);
    expect(longId?.ok === false && longId.reason).toMatch(/_id: .*256/);
    expect(nulId?.ok === false && nulId.reason).toMatch(/_id: holds a NUL character/);
    const [, missingId, badTime, badPaid] = page.records;
    expect(missingId).toMatchObject({
      ok: false,
      id: null,
      createdAt: "2024-05-01T10:00:02.000Z",
      raw: noId,
    });
    expect(missingId?.ok === false && missingId.reason).toContain("_id");
    expect(badTime).toMatchObject({ ok: false, id: "b3", createdAt: null, booking: { _id: "b3" } });
    expect(badTime?.ok === false && badTime.reason).toContain("createdAt");
    expect(missingId).not.toHaveProperty("booking");
    expect(badPaid).toMatchObject({ ok: true, id: "b4", problems: [expect.stringMatching(/^paid: /)] });
    expect(badPaid?.ok && badPaid.record.paid).toBeUndefined();
  });
  it("checks what the mirror reads of a full record, and keeps the rest unread in its text", async () => {
    const withItem = (i: number, change: Record<string, unknown>) => {
      const b = fullBooking(7, i);
      const [first, ...rest] = b.packages.packages;
      const [item, ...items] = first?.items ?? [];
      const changed = { ...first, items: [{ ...item, ...change }, ...items] };
      return { ...b, packages: { ...b.packages, packages: [changed, ...rest] } };
    };
    const records = [
      // Fields no column reads: a bad one must not cost the mirror the booking.
      { ...withItem(1, { createdAt: "someday" }), description: 42, category: { odd: true } },
      // A field a child row reads: a booking still, the field left out and named in its problems.
      withItem(2, { price: "12.50" }),
      { ...fullBooking(7, 3), carrier: 7 },
    ];
    const srv = await serve(
      json(200, {
        success: true,
        data: records,
        pagination: { total: 3, page: 1, pageSize: 100, totalPages: 1 },
      }),
    );
    const page = await client(srv.baseUrl).api.listBookings({ page: 1, pageSize: 100 });
    expect(page.records.map((r) => r.ok)).toEqual([true, true, true]);
    const [unread, badPrice, badCarrier] = page.records;
    expect(unread).toMatchObject({ ok: true, id: records[0]?._id, problems: [] });
    expect(unread?.ok && unread.record).toEqual(records[0]);
    expect(badPrice?.ok && badPrice.problems.join()).toContain("packages.packages.0.items.0.price");
    expect(badPrice?.ok && badPrice.record.packages?.packages?.[0]?.items?.[0]?.price).toBeUndefined();
    expect(badPrice?.ok && badPrice.raw).toEqual(records[1]);
    expect(badCarrier?.ok && badCarrier.problems.join()).toContain("carrier");
  });
  it("keeps each record as received, fields the schema does not name included, whatever the layout", async () => {
    const first = { ...fullBooking(7, 1), branchName: 'Caf\u00e9 "Lagos" [main]', unnamed: { a: [1, 2] } };
    const second = fullBooking(7, 2);
    // As a server might write it: pretty-printed, with \u escapes JSON.stringify would not write.
    const pretty = (v: unknown) => JSON.stringify(v, null, 2).replace(/é/g, "\\u00e9");
    const body = `{ "success": true,\n "data": [ ${pretty(first)} ,\n${pretty(second)} ],\n "pagination": {"total": 2, "page": 1, "pageSize": 100, "totalPages": 1} }`;
    const summaries = `{"success":true,"data":{"bookings":[ ${pretty({ ...summary(1), unnamed: true })} ],"nextCursor":null,"hasMore":false}}`;
    const srv = await serve(raw(200, body), raw(200, summaries));
    const { api } = client(srv.baseUrl);
    const page = await api.listBookings({ page: 1, pageSize: 100 });
    expect(page.records.map((r) => r.ok && r.record)).toEqual([first, second]);
    expect(page.records[0]).toMatchObject({ ok: true, record: { branchName: 'Café "Lagos" [main]' } });
    const feedPage = await api.fetchRecent({ limit: 10 });
    const [fed] = feedPage.records;
    expect(fed?.ok && fed.record).toEqual({ ...summary(1), unnamed: true });
  });
});

describe("failures that are final", () => {
  it("401 fails at once with the server's message", async () => {
    const srv = await serve(json(401, errorBody(401, "Invalid or expired token")));
    const { api, events } = client(srv.baseUrl);
    const err = await failure(api.fetchRecent({ limit: 10 }));
    expect(err).toMatchObject({ status: 401, retryable: false, attempts: 1 });
    expect(err.message).toBe("fetch-recent-bookings: HTTP 401 Unauthorized: Invalid or expired token");
    expect(srv.hits).toHaveLength(1);
    expect(events).toMatchObject([
      { endpoint: "fetch-recent-bookings", outcome: "error", status: 401, attempt: 1 },
    ]);
  });

  it("401 without an envelope still says the token is invalid or expired", async () => {
    const srv = await serve(raw(401, ""));
    const err = await failure(client(srv.baseUrl).api.listBookings({ page: 1, pageSize: 10 }));
    expect(err.message).toContain("Invalid or expired token");
    expect(err.retryable).toBe(false);
  });

  it("400 fails at once with the server's message; a non-envelope 404 with the status text", async () => {
    const srv = await serve(
      json(400, errorBody(400, "limit must be at most 100")),
      raw(404, "nope", "text/plain"),
    );
    const { api } = client(srv.baseUrl);
    const bad = await failure(api.fetchRecent({ limit: 10 }));
    expect(bad).toMatchObject({ status: 400, retryable: false, attempts: 1 });
    expect(bad.message).toBe("fetch-recent-bookings: HTTP 400 Bad Request: limit must be at most 100");
    const missing = await failure(api.listBookings({ page: 1, pageSize: 10 }));
    expect(missing.message).toMatch(/^list-bookings: .*404 Not Found/);
    expect(srv.hits).toHaveLength(2);
  });
});

describe("response bodies over the cap", () => {
  const MB = 1024 * 1024;

  it.each([
    ["with", true],
    ["without", false],
  ])(
    "a 300 MB body %s Content-Length that is no page is asked again in smaller pages, then fails unretried, never read past the cap",
    async (_, contentLength) => {
      const sent = Array.from({ length: 6 }, () => ({ bytes: 0 }));
      const srv = await serve(...sent.map((s) => streamed(300 * MB, { contentLength }, s)));
      const { api, events } = client(srv.baseUrl);
      const rssBefore = process.memoryUsage().rss;
      const peakBefore = process.resourceUsage().maxRSS * 1024;
      const t0 = performance.now();
      const err = await failure(api.fetchRecent({ limit: 10 }));
      expect(performance.now() - t0).toBeLessThan(15_000);
      // The highest RSS the process ever had, when these requests raised it: an upper bound on what
      // they took. A peak an earlier test left (the other case) is not theirs.
      const peakAfter = process.resourceUsage().maxRSS * 1024;
      const peakGrowth = peakAfter > peakBefore ? peakAfter - rssBefore : 0;
      expect(peakGrowth).toBeLessThan(128 * MB);
      for (const s of sent) expect(s.bytes).toBeLessThan(64 * MB);
      expect(err).toMatchObject({ retryable: false, attempts: 6 });
      expect(err.message).toBe(
        "fetch-recent-bookings: response body over 32 MB (SYNC_MAX_RESPONSE_MB); the source sent a larger page than it should",
      );
      // Limits 10, 5, 3, 2 and 1, then the one record's start, which shows no page.
      expect(srv.hits.map((h) => h.url.searchParams.get("limit"))).toEqual(["10", "5", "3", "2", "1", "1"]);
      expect(events.map((e) => e.outcome)).toEqual(["error", "error", "error", "error", "error", "error"]);
    },
    30_000,
  );

  it("reads a body of exactly the cap; one byte more is asked again with half the limit", async () => {
    const page = (bytes: number): Answer => {
      const text = JSON.stringify(feed([summary(1)]));
      return raw(200, text + " ".repeat(bytes - text.length));
    };
    const srv = await serve(page(MB), page(MB + 1), json(200, feed([summary(2)], null, true)));
    const { api } = client(srv.baseUrl, { maxBodyBytes: MB });
    const ok = await api.fetchRecent({ limit: 10 });
    expect(ok.records).toHaveLength(1);
    const smaller = await api.fetchRecent({ limit: 10 });
    expect(smaller).toMatchObject({ records: [{ id: "b2" }], hasMore: true, attempts: 2 });
    expect(srv.hits.map((h) => h.url.searchParams.get("limit"))).toEqual(["10", "10", "5"]);
  });

  it("counts a compressed body as it is decompressed, whatever its Content-Length says", async () => {
    const gzipped = gzipSync(Buffer.alloc(8 * MB, " "));
    const srv = await serve((_req, res) => {
      res.writeHead(200, {
        "content-type": "application/json",
        "content-encoding": "gzip",
        "content-length": String(gzipped.length),
      });
      res.end(gzipped);
    });
    const err = await failure(client(srv.baseUrl, { maxBodyBytes: MB }).api.fetchRecent({ limit: 10 }));
    expect(err).toMatchObject({ retryable: false });
    expect(err.message).toMatch(/response body over 1 MB/);
  });
});

describe("abort", () => {
  it("cancels an in-flight request promptly with an AbortError", async () => {
    const srv = await serve(hang);
    const controller = new AbortController();
    const pending = client(srv.baseUrl, { timeoutMs: 60_000 }).api.fetchRecent(
      { limit: 10 },
      controller.signal,
    );
    await srv.hitCount(1);
    const t0 = performance.now();
    controller.abort();
    const err = await pending.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isAbortError(err)).toBe(true);
    expect(err).not.toBeInstanceOf(ApiError);
    expect((err as Error).message).toBe("fetch-recent-bookings: request aborted");
    expect(performance.now() - t0).toBeLessThan(5_000);
  });

  it("rejects at once, sending nothing, when the signal is already aborted", async () => {
    const srv = await serve(okFeed);
    const err = await client(srv.baseUrl)
      .api.fetchRecent({ limit: 10 }, AbortSignal.abort(new Error("shutdown")))
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(isAbortError(err)).toBe(true);
    expect(srv.hits).toHaveLength(0);
  });

  it("cancels the wait between attempts", async () => {
    const srv = await serve(json(503, errorBody(503, "down"), { "retry-after": "60" }));
    const controller = new AbortController();
    const { api, events } = client(srv.baseUrl);
    const pending = api.listBookings({ page: 1, pageSize: 10 }, controller.signal);
    await srv.hitCount(1);
    while (events.length === 0) await new Promise((r) => setImmediate(r));
    const t0 = performance.now();
    controller.abort(new Error("shutdown"));
    const err = await pending.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isAbortError(err)).toBe(true);
    expect(performance.now() - t0).toBeLessThan(5_000);
    expect(srv.hits).toHaveLength(1);
  });
});

describe("secrecy", () => {
  it("never puts the token in an error message or a log line, even when the server echoes it", async () => {
    const echo: Answer = (req, res) => {
      res.writeHead(400, { "content-type": "application/json" });
      res.end(JSON.stringify(errorBody(400, `bad header ${req.headers.authorization}`)));
    };
    const echo503: Answer = (req, res) => {
      res.writeHead(503, { "content-type": "application/json" });
      res.end(JSON.stringify(errorBody(503, `down for ${req.headers.authorization}`)));
    };
    const srv = await serve(echo503, drop, hang, html(502), raw(200, ""), echo);
    const { api, lines } = client(srv.baseUrl, { timeoutMs: 300, maxRetries: 5 });
    const err = await failure(api.fetchRecent({ limit: 10 }));
    expect(err.status).toBe(400);
    expect(err.message).toContain("[redacted]");
    expect(lines).toHaveLength(5);
    const everything = [chain(err), ...lines].join("\n");
    expect(everything).not.toContain(TOKEN);
  });
});
