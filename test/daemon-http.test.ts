import { once } from "node:events";
import { request } from "node:http";
import { connect } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { createHealth } from "../src/daemon/health.js";
import { type HttpServerHandle, type HttpServerOptions, startHttpServer } from "../src/daemon/http.js";
import { createMetrics } from "../src/daemon/metrics.js";
import { createScheduler, type RunReason, type Ticker } from "../src/daemon/scheduler.js";
import type { Logger } from "../src/sync/ports.js";
import { parsePrometheusText, sampleValue } from "./daemon-prom-text.js";

const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {} };
const noTicks: Ticker = () => ({ stop() {} });
const T0 = new Date("2026-03-01T10:00:00.000Z");

/** The real pieces wired together: scheduler (ticks by hand), health, metrics, HTTP on 127.0.0.1:0. */
async function setup(overrides: Partial<HttpServerOptions> = {}) {
  let now = T0;
  const clock = { now: () => now };
  const health = createHealth({ readyMaxAgeSeconds: 180 });
  const metrics = createMetrics({ clock, processMetrics: false });
  const reasons: RunReason[] = [];
  let release: () => void = () => undefined;
  const scheduler = createScheduler({
    schedule: "* * * * *",
    logger: quiet,
    ticker: noTicks,
    runOnce: (reason) => {
      reasons.push(reason);
      return new Promise<void>((resolve) => {
        release = resolve;
      });
    },
  });
  const server = await startHttpServer({
    host: "127.0.0.1",
    port: 0,
    health,
    registry: metrics.registry,
    trigger: () => scheduler.trigger(),
    clock,
    logger: quiet,
    ...overrides,
  });
  servers.push(server);
  const finishRun = async () => {
    const ended = once(scheduler.events, "run:end");
    release();
    await ended;
  };
  const setNow = (d: Date) => {
    now = d;
  };
  return { server, health, metrics, scheduler, reasons, finishRun, setNow };
}

const servers: HttpServerHandle[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function json(res: Response): Promise<Record<string, unknown>> {
  expect(res.headers.get("content-type")).toBe("application/json");
  return (await res.json()) as Record<string, unknown>;
}

describe("daemon HTTP endpoint", () => {
  it("GET /healthz answers 200 ok, and HEAD works too", async () => {
    const { server } = await setup();
    expect(server.url).toBe(`http://127.0.0.1:${server.port}`);
    expect(server.port).toBeGreaterThan(0);
    const res = await fetch(`${server.url}/healthz`);
    expect(res.status).toBe(200);
    expect(await json(res)).toEqual({ status: "ok" });
    const head = await fetch(`${server.url}/healthz`, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe("");
  });

  it("GET /readyz is 503 before the first sync, 200 after, 503 again once stale", async () => {
    const { server, health, setNow } = await setup();
    let res = await fetch(`${server.url}/readyz`);
    expect(res.status).toBe(503);
    expect(await json(res)).toMatchObject({ ready: false, reason: "never synced", lastSuccessAt: null });

    health.recordSuccess(T0);
    setNow(new Date(T0.getTime() + 60_000));
    res = await fetch(`${server.url}/readyz`);
    expect(res.status).toBe(200);
    expect(await json(res)).toMatchObject({ ready: true, ageSeconds: 60, maxAgeSeconds: 180 });

    setNow(new Date(T0.getTime() + 120_000));
    health.recordFailure(
      new Date(T0.getTime() + 90_000),
      new Error("fetch page 1", { cause: new Error("HTTP 502") }),
    );
    health.recordFailure(new Date(T0.getTime() + 120_000), new Error("HTTP 503"));
    setNow(new Date(T0.getTime() + 181_000));
    res = await fetch(`${server.url}/readyz`);
    expect(res.status).toBe(503);
    const body = await json(res);
    expect(body).toMatchObject({
      ready: false,
      lastSuccessAt: T0.toISOString(),
      ageSeconds: 181,
      failuresSinceSuccess: 2,
      failingSince: "2026-03-01T10:01:30.000Z",
      lastFailureAt: "2026-03-01T10:02:00.000Z",
      lastError: "HTTP 503",
    });
    expect(body.reason).toContain(`last success at ${T0.toISOString()}`);
    expect(body.reason).toContain(
      "; failing since 2026-03-01T10:01:30.000Z: 2 runs in a row (the last 1 with this error): HTTP 503",
    );

    health.recordSuccess(new Date(T0.getTime() + 181_000));
    res = await fetch(`${server.url}/readyz`);
    expect(res.status).toBe(200);
    expect(await json(res)).toMatchObject({ failuresSinceSuccess: 0, failingSince: null, lastError: null });
  });

  it("readiness keeps the cause chain of a failure", () => {
    const health = createHealth({ readyMaxAgeSeconds: 60 });
    health.recordFailure(
      T0,
      new Error("sync stream all", { cause: new Error("HTTP 401: Invalid or expired token") }),
    );
    const status = health.status(T0);
    expect(status.lastError).toBe("sync stream all: HTTP 401: Invalid or expired token");
    expect(status.reason).toBe(
      `never synced; the last sync failed at ${T0.toISOString()}: sync stream all: HTTP 401: Invalid or expired token`,
    );
  });

  it("readiness says how long a run of the same failure has lasted", () => {
    const health = createHealth({ readyMaxAgeSeconds: 60 });
    const at = (minutes: number) => new Date(T0.getTime() + minutes * 60_000);
    health.recordFailure(at(0), new Error("HTTP 502"));
    for (const m of [5, 10, 15]) health.recordFailure(at(m), new Error("HTTP 401: Invalid or expired token"));
    const status = health.status(at(16));
    expect(status).toMatchObject({ ready: false, failuresSinceSuccess: 4, failingSince: T0.toISOString() });
    expect(status.reason).toBe(
      `never synced; failing since ${T0.toISOString()}: 4 runs in a row (the last 3 with this error): HTTP 401: Invalid or expired token`,
    );
    health.recordSuccess(at(20));
    health.recordFailure(at(25), new Error("HTTP 401: Invalid or expired token"));
    health.recordFailure(at(30), new Error("HTTP 401: Invalid or expired token"));
    expect(health.status(at(31)).reason).toMatch(
      new RegExp(
        `; failing since ${at(25).toISOString()}: 2 runs in a row: HTTP 401: Invalid or expired token$`,
      ),
    );
  });

  it("GET /metrics serves Prometheus text whose counters match the recorded runs", async () => {
    const { server, metrics } = await setup();
    const base = {
      pages: 1,
      durationMs: 200,
      finishedAt: T0.toISOString(),
      checkpointAfter: "2026-03-01T09:59:00.000Z",
    };
    metrics.recordRun({ ...base, status: "success", inserted: 4, updated: 2, unchanged: 1, rejected: 1 });
    metrics.recordRun({ ...base, status: "failed", inserted: 0, updated: 0, unchanged: 0, rejected: 0 });
    const res = await fetch(`${server.url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
    const families = parsePrometheusText(await res.text());
    expect(sampleValue(families, "booking_sync_runs_total", { kind: "sync", status: "success" })).toBe(1);
    expect(sampleValue(families, "booking_sync_runs_total", { kind: "sync", status: "failed" })).toBe(1);
    expect(sampleValue(families, "booking_sync_bookings_total", { change: "new" })).toBe(4);
    expect(sampleValue(families, "booking_sync_rejected_total")).toBe(1);
    expect(sampleValue(families, "booking_sync_checkpoint_lag_seconds", { stream: "all" })).toBe(60);
  });

  it("POST /sync starts a run (202), and coalesces while one is in flight", async () => {
    const { server, scheduler, reasons, finishRun } = await setup();
    const started = once(scheduler.events, "run:start");
    let res = await fetch(`${server.url}/sync`, { method: "POST", body: "ignored" });
    expect(res.status).toBe(202);
    expect(await json(res)).toEqual({ accepted: true, coalesced: false });
    expect((await started)[0]).toMatchObject({ reason: "trigger" });

    res = await fetch(`${server.url}/sync`, { method: "POST" });
    expect(await json(res)).toEqual({ accepted: true, coalesced: true });
    res = await fetch(`${server.url}/sync`, { method: "POST" });
    expect(await json(res)).toEqual({ accepted: true, coalesced: true });
    expect(reasons).toEqual(["trigger"]);
    await finishRun();
    expect(reasons).toEqual(["trigger", "trigger"]);
    await finishRun();
    expect(scheduler.running()).toBe(false);

    await scheduler.stop();
    res = await fetch(`${server.url}/sync`, { method: "POST" });
    expect(res.status).toBe(503);
    expect(await json(res)).toMatchObject({ accepted: false });
  });

  it("POST /sync requires the bearer token when one is configured", async () => {
    const { server, reasons } = await setup({ triggerToken: "s3cret-trigger" });
    const post = (authorization?: string) =>
      fetch(`${server.url}/sync`, { method: "POST", headers: authorization ? { authorization } : {} });
    for (const header of [
      undefined,
      "Bearer wrong",
      "Bearer s3cret-trigger-and-more",
      "Basic s3cret-trigger",
      "s3cret-trigger",
    ]) {
      const res = await post(header);
      expect(res.status, String(header)).toBe(401);
      expect(res.headers.get("www-authenticate")).toBe("Bearer");
      expect(JSON.stringify(await json(res))).not.toContain("s3cret");
    }
    expect(reasons).toEqual([]);
    const res = await post("Bearer s3cret-trigger");
    expect(res.status).toBe(202);
    expect(reasons).toEqual(["trigger"]);
  });

  it("answers 404 for unknown paths and 405 (with Allow) for wrong methods", async () => {
    const { server } = await setup();
    expect((await fetch(`${server.url}/nope`)).status).toBe(404);
    expect((await fetch(`${server.url}/healthz/extra`)).status).toBe(404);
    const getSync = await fetch(`${server.url}/sync`);
    expect(getSync.status).toBe(405);
    expect(getSync.headers.get("allow")).toBe("POST");
    const postHealth = await fetch(`${server.url}/healthz`, { method: "POST" });
    expect(postHealth.status).toBe(405);
    expect(postHealth.headers.get("allow")).toBe("GET, HEAD");
    expect((await fetch(`${server.url}/readyz?verbose=1`)).status).toBe(503);
  });

  it("treats a request target like //healthz as a path, not a host", async () => {
    const { server } = await setup();
    const res = await new Promise<number>((resolve, reject) => {
      const req = request({ host: "127.0.0.1", port: server.port, path: "//healthz" }, (r) => {
        r.resume();
        resolve(r.statusCode ?? 0);
      });
      req.on("error", reject);
      req.end();
    });
    expect(res).toBe(404);
  });

  it("answers 500 when a handler fails, and keeps serving", async () => {
    const { server } = await setup({
      registry: {
        contentType: "text/plain",
        metrics: () => Promise.reject(new Error("collector broke")),
      } as never,
    });
    const res = await fetch(`${server.url}/metrics`);
    expect(res.status).toBe(500);
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  });

  it("close() stops listening; a taken port is reported with its address", async () => {
    const { server } = await setup();
    await expect(setup({ port: server.port })).rejects.toThrow(`listen on 127.0.0.1:${server.port}`);
    await fetch(`${server.url}/healthz`); // leaves a keep-alive connection open
    await server.close();
    await server.close(); // idempotent
    await expect(fetch(`${server.url}/healthz`)).rejects.toThrow();
  });

  it("close() ends a connection that never sent a request (a browser's spare one), not one in flight", async () => {
    let called: () => void = () => undefined;
    const reached = new Promise<void>((resolve) => {
      called = resolve;
    });
    let answer: (text: string) => void = () => undefined;
    const { server } = await setup({
      registry: {
        contentType: "text/plain",
        metrics: () =>
          new Promise<string>((resolve) => {
            answer = resolve;
            called();
          }),
      } as never,
    });
    const spare = connect(server.port, "127.0.0.1");
    await once(spare, "connect");
    const spareClosed = once(spare, "close");
    const inFlight = fetch(`${server.url}/metrics`);
    await reached;
    const closed = server.close();
    await spareClosed;
    answer("up 1\n");
    const res = await inFlight;
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("up 1\n");
    await closed;
  });
});
