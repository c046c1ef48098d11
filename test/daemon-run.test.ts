/**
 * `booking-sync run` as operators run it: a subprocess against the simulator, a real SQLite file
 * and a real HTTP port. Waits on log lines, simulator requests and HTTP answers, never on sleeps.
 */
import { afterEach, describe, expect, it } from "vitest";
import { parsePrometheusText, sampleValue } from "./daemon-prom-text.js";
import {
  closedAfterEach,
  type DaemonProcess,
  freePort,
  http,
  type LogLine,
  pollUntil,
  spawnDaemon,
} from "./support/daemon-process.js";
import { analyst, type Harness, harness, runCli } from "./support/harness.js";
import { closeServers, serve, streamed } from "./support/scripted-server.js";

let h: Harness | undefined;
// Registered first, so it runs after the daemons are killed (vitest runs after-hooks as a stack).
afterEach(async () => {
  closeServers();
  await h?.close();
  h = undefined;
});
const { daemons } = closedAfterEach();

/** A schedule that never fires during a test: runs happen at start-up and on POST /sync only. */
const NEVER = "0 0 1 1 *";
const EVERY_SECOND = "* * * * * *";

const finished =
  (status = "success") =>
  (l: LogLine) =>
    l.msg === "sync finished" && l.status === status;
const failed = (l: LogLine) => l.status === "failed" && String(l.msg).startsWith("sync failed");

interface RunRow {
  id: number;
  kind: string;
  status: string;
  started_at: string;
  finished_at: string | null;
  pages: number;
  bookings_new: number;
  bookings_updated: number;
  bookings_unchanged: number;
  rejects: number;
}

function runs(dbPath: string): RunRow[] {
  const db = analyst(dbPath);
  try {
    return db.prepare("SELECT * FROM sync_runs ORDER BY id").all() as RunRow[];
  } finally {
    db.close();
  }
}

/** Starts the daemon on a free port; returns it and its base URL. */
async function daemon(env: Record<string, string>): Promise<{ d: DaemonProcess; url: string }> {
  const port = await freePort();
  const d = spawnDaemon((h as Harness).env({ HTTP_PORT: String(port), ...env }));
  daemons.push(d);
  return { d, url: `http://127.0.0.1:${port}` };
}

/** SIGTERM, then the exit and how long it took, ms. */
async function terminate(d: DaemonProcess): Promise<{ code: number | null; ms: number }> {
  const t0 = Date.now();
  d.child.kill("SIGTERM");
  const { code } = await d.exited;
  return { code, ms: Date.now() - t0 };
}

describe("booking-sync run", () => {
  it("syncs at start-up and on every tick, never two runs at once; a busy tick is skipped and counted", async () => {
    // Every run re-reads the whole feed (lookback > its span) at 15 pages x 100 ms: longer than a tick.
    h = await harness({ bookings: 300, pageSize: 20, latencyMs: 100 });
    const { d, url } = await daemon({ SYNC_SCHEDULE: EVERY_SECOND, SYNC_LOOKBACK_SECONDS: "2592000" });
    await d.waitForLogs(finished(), 3, "sync finished");
    await d.waitForLog((l) => String(l.msg).startsWith("schedule tick skipped"), "a skipped tick");
    const metrics = parsePrometheusText((await http(`${url}/metrics`)).text);
    expect(sampleValue(metrics, "booking_sync_skipped_ticks_total")).toBeGreaterThanOrEqual(1);
    expect((await terminate(d)).code).toBe(0);

    const rows = runs(h.dbPath).filter((r) => r.kind === "sync");
    const done = rows.filter((r) => r.finished_at !== null);
    expect(done.filter((r) => r.status === "success").length).toBeGreaterThanOrEqual(3);
    for (let i = 1; i < rows.length; i++) {
      const previous = rows[i - 1] as RunRow;
      expect(previous.finished_at, `run ${previous.id} ended`).not.toBeNull();
      expect((rows[i] as RunRow).started_at >= (previous.finished_at as string)).toBe(true);
    }
    expect(h.mirrorIds()).toEqual(h.sourceIds());
  });

  it("/readyz: not ready before the first success, ready after it, unready with the cause when syncs keep failing", async () => {
    h = await harness({ bookings: 50, faultRate: 1 });
    const { d, url } = await daemon({
      SYNC_SCHEDULE: EVERY_SECOND,
      SYNC_MAX_RETRIES: "0",
      READY_MAX_AGE_SECONDS: "2",
    });
    await d.waitForLog(failed, "a failed sync");
    const never = await pollUntil(`${url}/readyz`, (a) => a.status !== 0);
    expect(never.status).toBe(503);
    expect(never.json?.reason).toMatch(/^never synced; (the last sync failed at|failing since) \S+: /);
    expect((await http(`${url}/healthz`)).status).toBe(200);

    h.sim.behave({ faultRate: 0 });
    const ready = await pollUntil(`${url}/readyz`, (a) => a.status === 200);
    expect(ready.json).toMatchObject({ status: "ready", ready: true, failuresSinceSuccess: 0 });

    h.sim.behave({ faultRate: 1 });
    const stale = await pollUntil(`${url}/readyz`, (a) => a.status === 503);
    expect(stale.json).toMatchObject({ status: "not ready", ready: false, maxAgeSeconds: 2 });
    expect(stale.json?.failuresSinceSuccess).toBeGreaterThanOrEqual(1);
    expect(String(stale.json?.lastError)).toMatch(/fetch-recent-bookings|list-bookings/);
    expect(String(stale.json?.reason)).toContain("older than 2 s");
    expect((await http(`${url}/healthz`)).status).toBe(200);
    expect((await terminate(d)).code).toBe(0);
  });

  it("POST /sync runs a sync (bearer token when TRIGGER_TOKEN is set); /metrics parses and matches sync_runs", async () => {
    h = await harness({ bookings: 120, pageSize: 50 });
    const trigger = "trigger-7b1e-secret";
    const { d, url } = await daemon({ SYNC_SCHEDULE: NEVER, TRIGGER_TOKEN: trigger });
    await d.waitForLog(finished(), "the start-up sync");

    expect((await http(`${url}/sync`, { method: "POST" })).status).toBe(401);
    const wrong = await http(`${url}/sync`, { method: "POST", headers: { authorization: "Bearer nope" } });
    expect(wrong.status).toBe(401);
    h.sim.insert(7);
    const ok = await http(`${url}/sync`, { method: "POST", headers: { authorization: `Bearer ${trigger}` } });
    // Not coalesced: the refused requests started nothing.
    expect(ok).toMatchObject({ status: 202, json: { accepted: true, coalesced: false } });
    await d.waitForLogs(finished(), 2, "the triggered sync");

    const text = (await http(`${url}/metrics`)).text;
    const m = parsePrometheusText(text);
    const rows = runs(h.dbPath);
    expect(rows.map((r) => r.status)).toEqual(["success", "success"]);
    const sum = (k: keyof RunRow) => rows.reduce((n, r) => n + Number(r[k]), 0);
    expect(sampleValue(m, "booking_sync_runs_total", { kind: "sync", status: "success" })).toBe(2);
    expect(sampleValue(m, "booking_sync_bookings_total", { change: "new" })).toBe(sum("bookings_new"));
    expect(sum("bookings_new")).toBe(127);
    expect(sampleValue(m, "booking_sync_bookings_total", { change: "updated" })).toBe(
      sum("bookings_updated"),
    );
    expect(sampleValue(m, "booking_sync_bookings_total", { change: "unchanged" })).toBe(
      sum("bookings_unchanged"),
    );
    expect(sampleValue(m, "booking_sync_rejected_total")).toBe(sum("rejects"));
    expect(sampleValue(m, "booking_sync_pages_total", { kind: "sync" })).toBe(sum("pages"));
    expect(sampleValue(m, "booking_sync_run_duration_seconds_count", { kind: "sync" })).toBe(2);
    const last = Date.parse((rows[1] as RunRow).finished_at as string) / 1000;
    expect(sampleValue(m, "booking_sync_last_success_timestamp_seconds", { kind: "sync" })).toBeCloseTo(
      last,
      2,
    );
    expect(sampleValue(m, "booking_sync_checkpoint_lag_seconds", { stream: "feed" })).toBeGreaterThanOrEqual(
      0,
    );
    expect(sampleValue(m, "booking_sync_drift_bookings")).toBe(0);
    expect(sampleValue(m, "booking_sync_source_bookings")).toBe(127);
    const ok200 = { endpoint: "fetch-recent-bookings", outcome: "ok", status: "200" };
    expect(sampleValue(m, "booking_sync_requests_total", ok200)).toBeGreaterThanOrEqual(2);
    expect(text).toContain("booking_sync_process_resident_memory_bytes");
    expect((await terminate(d)).code).toBe(0);

    // Without TRIGGER_TOKEN the trigger is open.
    const open = await daemon({ SYNC_SCHEDULE: NEVER });
    await open.d.waitForLog(finished(), "the start-up sync");
    expect((await http(`${open.url}/sync`, { method: "POST" })).status).toBe(202);
    await open.d.waitForLogs(finished(), 2, "the triggered sync");
    expect((await terminate(open.d)).code).toBe(0);
    expect(runs(h.dbPath)).toHaveLength(4);
  });

  it("/metrics counts the bookings a details pass read past without finding", async () => {
    h = await harness({ bookings: 120, pageSize: 50 });
    await h.sync();
    // Deleted at the source before its details were read.
    h.sim.remove(30);
    const { d, url } = await daemon({ SYNC_SCHEDULE: NEVER });
    await d.waitForLog(finished(), "the start-up sync");
    const m = parsePrometheusText((await http(`${url}/metrics`)).text);
    expect(sampleValue(m, "booking_sync_details_not_found_total")).toBe(1);
    expect((await terminate(d)).code).toBe(0);
  });

  it("SIGTERM mid-sync exits 0 within seconds; the next start completes the mirror (also with HTTP off)", async () => {
    h = await harness({ bookings: 3000, pageSize: 10, latencyMs: 5 });
    const { d } = await daemon({ SYNC_SCHEDULE: NEVER });
    let feed = 0;
    const inFlight = new Promise<void>((resolve) => {
      h?.sim.events.on("request", (e) => {
        if (e.endpoint === "feed" && ++feed === 60) resolve();
      });
    });
    await inFlight;
    const stopped = await terminate(d);
    expect(stopped.code).toBe(0);
    expect(stopped.ms).toBeLessThan(5000);
    expect(d.lines.some((l) => l.msg === "stopping: received SIGTERM")).toBe(true);
    expect(d.lines.some((l) => l.msg === "shutdown complete")).toBe(true);
    expect(runs(h.dbPath).at(-1)?.status).toBe("aborted");
    const partial = h.mirrorIds().length;
    expect(partial).toBeGreaterThan(0);
    expect(partial).toBeLessThan(3000);
    expect(h.store.readStream("feed").walk).not.toBeNull();

    const again = spawnDaemon(h.env({ HTTP_PORT: "0", SYNC_SCHEDULE: NEVER }));
    daemons.push(again);
    const started = await again.waitForLog((l) => String(l.msg).startsWith("booking-sync run:"), "start-up");
    expect(started.http).toBe("off");
    await again.waitForLog(finished(), "the resumed sync");
    expect(again.stderr()).toContain("resuming the unfinished walk");
    expect(h.mirrorIds()).toEqual(h.sourceIds());
    expect((await terminate(again)).code).toBe(0);
  });

  it("a second daemon on the same database waits for the lease, says who holds it, and takes over", async () => {
    h = await harness({ bookings: 50 });
    const first = await daemon({ SYNC_SCHEDULE: EVERY_SECOND });
    await pollUntil(`${first.url}/readyz`, (a) => a.status === 200);

    const second = await daemon({ SYNC_SCHEDULE: EVERY_SECOND });
    const holds = `waiting for the writer lease held by pid ${first.d.pid} on host `;
    await second.d.waitForLog((l) => String(l.msg).startsWith(holds), "the lease refusal");
    const waiting = await pollUntil(`${second.url}/readyz`, (a) => a.status !== 0);
    expect(waiting.status).toBe(503);
    expect(String(waiting.json?.reason)).toContain(holds);
    expect(second.d.lines.some((l) => l.msg === "sync finished")).toBe(false);
    // A one-shot command beside the daemon is refused outright.
    const oneShot = await runCli(["sync"], h.env());
    expect(oneShot.code).toBe(1);
    expect(oneShot.stderr).toContain(
      `another booking-sync is writing to this database (pid ${first.d.pid} on`,
    );

    expect((await terminate(first.d)).code).toBe(0);
    await second.d.waitForLog((l) => l.msg === "took the writer lease; syncing", "the take-over");
    await pollUntil(`${second.url}/readyz`, (a) => a.status === 200);
    expect((await terminate(second.d)).code).toBe(0);
  });

  it("a token the API keeps rejecting stops the daemon with exit 1 and says so; the token is never shown", async () => {
    h = await harness({ bookings: 20, token: "the-right-token" });
    const secret = "tok-5d2c-rejected-secret";
    const { d } = await daemon({
      SYNC_SCHEDULE: EVERY_SECOND,
      BOOKING_API_TOKEN: secret,
      LOG_LEVEL: "trace",
    });
    const { code } = await d.exited;
    expect(code).toBe(1);
    expect(d.stderr()).toMatch(
      /^booking-sync: the partner API rejected the token on 3 consecutive runs \(.*HTTP 401.*\); check BOOKING_API_TOKEN/m,
    );
    expect(runs(h.dbPath).map((r) => r.status)).toEqual(["failed", "failed", "failed"]);
    expect(d.stdout() + d.stderr()).not.toContain(secret);
  });

  it("a source that sends a huge body fails each sync fast and the daemon runs on, recording failed runs", async () => {
    h = await harness({ bookings: 1 });
    const source = await serve(streamed(300 * 1024 * 1024, { contentLength: false }));
    const { d, url } = await daemon({
      BOOKING_API_BASE_URL: source.baseUrl,
      SYNC_SCHEDULE: EVERY_SECOND,
      SYNC_MAX_RESPONSE_MB: "1",
    });
    const [first] = await d.waitForLogs(failed, 2, "two failed syncs");
    expect(first?.msg).toBe(
      "sync failed: fetch-recent-bookings: response body over 1 MB (SYNC_MAX_RESPONSE_MB); the source sent a larger page than it should",
    );
    expect((await http(`${url}/healthz`)).status).toBe(200);
    expect((await terminate(d)).code).toBe(0);
    const failedRuns = runs(h.dbPath).filter((r) => r.status === "failed");
    expect(failedRuns.length).toBeGreaterThanOrEqual(2);
    // A body over the cap is read again in smaller pages, down to one, and no further: a bounded
    // number of requests a run (100, 50, 25, 13, 7, 4, 2, 1 and the record alone, after the read of
    // the source's total), never a retry loop.
    expect(source.hits.length).toBeLessThanOrEqual(11 * runs(h.dbPath).length);
  });

  it("RECONCILE_SCHEDULE runs reconcile passes beside the syncs, counted by kind", async () => {
    h = await harness({ bookings: 60, pageSize: 50 });
    const { d, url } = await daemon({ SYNC_SCHEDULE: NEVER, RECONCILE_SCHEDULE: EVERY_SECOND });
    await d.waitForLog(finished(), "the start-up sync");
    await d.waitForLog((l) => l.msg === "reconcile finished" && l.status === "success", "a reconcile");
    const m = parsePrometheusText((await http(`${url}/metrics`)).text);
    expect(
      sampleValue(m, "booking_sync_runs_total", { kind: "reconcile", status: "success" }),
    ).toBeGreaterThanOrEqual(1);
    expect((await terminate(d)).code).toBe(0);
    const kinds = runs(h.dbPath).map((r) => r.kind);
    expect(kinds[0]).toBe("sync");
    expect(kinds).toContain("reconcile");
  });

  it("a bad setting exits 2 before anything starts", async () => {
    h = await harness({ bookings: 1 });
    const r = await runCli(["run"], h.env({ SYNC_SCHEDULE: "every minute" }));
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('SYNC_SCHEDULE = "every minute" is not valid');
  });

  it("neither the API token nor the trigger token appears in any log line, even at trace level", async () => {
    const secret = "tok-9e4f-distinctive-secret";
    const trigger = "trg-0a7c-distinctive-secret";
    h = await harness({ bookings: 200, token: secret, pageSize: 50 });
    h.sim.inject([{ kind: "5xx" }, { kind: "429", retryAfter: 0 }, { kind: "401" }]);
    const { d, url } = await daemon({
      SYNC_SCHEDULE: NEVER,
      BOOKING_API_TOKEN: secret,
      TRIGGER_TOKEN: trigger,
      SYNC_DETAILS: "true",
      LOG_LEVEL: "trace",
    });
    // The injected 401 fails the start-up run; the triggered one succeeds.
    await d.waitForLog(failed, "the failed start-up sync");
    await http(`${url}/sync`, { method: "POST", headers: { authorization: `Bearer ${trigger}x` } });
    await http(`${url}/sync`, { method: "POST", headers: { authorization: `Bearer ${trigger}` } });
    await d.waitForLog(finished(), "the triggered sync");
    await http(`${url}/metrics`);
    await http(`${url}/readyz`);
    expect((await terminate(d)).code).toBe(0);
    const output = d.stdout() + d.stderr();
    // The level took effect: debug lines (retries, HTTP requests) are there.
    expect(d.lines.some((l) => l.level === 20 && l.msg === "http request")).toBe(true);
    expect(output).toMatch(/retry/i);
    expect(output).not.toContain(secret);
    expect(output).not.toContain(trigger);
  });
});
