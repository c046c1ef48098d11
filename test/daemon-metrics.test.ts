import { describe, expect, it } from "vitest";
import type { ApiClientOptions } from "../src/api/client.js";
import { createMetrics, type RunReport } from "../src/daemon/metrics.js";
import type { EventsStatus } from "../src/store/events-status.js";
import { parsePrometheusText, sampleValue } from "./daemon-prom-text.js";

function report(overrides: Partial<RunReport> = {}): RunReport {
  return {
    status: "success",
    pages: 2,
    inserted: 5,
    updated: 1,
    unchanged: 3,
    rejected: 0,
    durationMs: 1500,
    finishedAt: "2026-03-01T10:00:00.000Z",
    checkpointAfter: "2026-03-01T09:59:00.000Z",
    ...overrides,
  };
}

async function scrape(metrics: ReturnType<typeof createMetrics>) {
  return parsePrometheusText(await metrics.registry.metrics());
}

describe("metrics", () => {
  it("parses as Prometheus text, with HELP and TYPE for every family", async () => {
    const metrics = createMetrics();
    metrics.recordRun(report());
    const families = await scrape(metrics);
    const ours = [...families.values()].filter((f) => f.name.startsWith("booking_sync_"));
    expect(ours.length).toBe(families.size);
    for (const family of families.values()) expect(family.help, family.name).toBeTruthy();
    expect(families.get("booking_sync_runs_total")?.type).toBe("counter");
    expect(families.get("booking_sync_run_duration_seconds")?.type).toBe("histogram");
    expect(families.get("booking_sync_checkpoint_lag_seconds")?.type).toBe("gauge");
    // Process metrics carry the prefix too.
    expect(families.has("booking_sync_process_cpu_user_seconds_total")).toBe(true);
    expect(families.has("booking_sync_nodejs_heap_size_total_bytes")).toBe(true);
  });

  it("counts runs by kind and status, and bookings by change, as recorded", async () => {
    const metrics = createMetrics({ processMetrics: false });
    metrics.recordRun(report());
    metrics.recordRun(report({ inserted: 2, updated: 4, unchanged: 0, rejected: 3 }));
    metrics.recordRun(report({ status: "failed", inserted: 1, updated: 0, unchanged: 0 }));
    metrics.recordRun(report({ status: "aborted", inserted: 0, updated: 0, unchanged: 0, pages: 0 }));
    metrics.recordRun(report({ inserted: 0, updated: 0, unchanged: 7, pages: 1 }), "reconcile");
    const f = await scrape(metrics);
    expect(sampleValue(f, "booking_sync_runs_total", { kind: "sync", status: "success" })).toBe(2);
    expect(sampleValue(f, "booking_sync_runs_total", { kind: "sync", status: "failed" })).toBe(1);
    expect(sampleValue(f, "booking_sync_runs_total", { kind: "sync", status: "aborted" })).toBe(1);
    expect(sampleValue(f, "booking_sync_runs_total", { kind: "reconcile", status: "success" })).toBe(1);
    expect(sampleValue(f, "booking_sync_bookings_total", { change: "new" })).toBe(8);
    expect(sampleValue(f, "booking_sync_bookings_total", { change: "updated" })).toBe(5);
    expect(sampleValue(f, "booking_sync_bookings_total", { change: "unchanged" })).toBe(10);
    expect(sampleValue(f, "booking_sync_rejected_total")).toBe(3);
    expect(sampleValue(f, "booking_sync_pages_total", { kind: "sync" })).toBe(6);
    expect(sampleValue(f, "booking_sync_run_duration_seconds_count", { kind: "sync" })).toBe(4);
    expect(sampleValue(f, "booking_sync_run_duration_seconds_sum", { kind: "sync" })).toBe(6);
    expect(sampleValue(f, "booking_sync_run_duration_seconds_bucket", { kind: "sync", le: "1" })).toBe(0);
    expect(sampleValue(f, "booking_sync_run_duration_seconds_bucket", { kind: "sync", le: "+Inf" })).toBe(4);
  });

  it("keeps the last success time of each kind, unmoved by failures", async () => {
    const metrics = createMetrics({ processMetrics: false });
    metrics.recordRun(report({ finishedAt: "2026-03-01T10:00:00.000Z" }));
    metrics.recordRun(report({ status: "failed", finishedAt: "2026-03-01T10:05:00.000Z" }));
    const f = await scrape(metrics);
    const expected = Date.parse("2026-03-01T10:00:00.000Z") / 1000;
    expect(sampleValue(f, "booking_sync_last_success_timestamp_seconds", { kind: "sync" })).toBe(expected);
  });

  it("counts requests and retries by endpoint, outcome and status", async () => {
    const metrics = createMetrics({ processMetrics: false });
    // Compile-time: the hook plugs straight into the API client.
    const hook: ApiClientOptions["onRequest"] = metrics.onRequest;
    expect(hook).toBeTypeOf("function");
    const endpoint = "fetch-recent-bookings";
    metrics.onRequest({ endpoint, outcome: "retry", status: 503, durationMs: 20, attempt: 1 });
    metrics.onRequest({ endpoint, outcome: "retry", durationMs: 30_000, attempt: 2 });
    metrics.onRequest({ endpoint, outcome: "ok", status: 200, durationMs: 40, attempt: 3 });
    metrics.onRequest({
      endpoint: "list-bookings",
      outcome: "error",
      status: 401,
      durationMs: 10,
      attempt: 1,
    });
    const f = await scrape(metrics);
    const requests = (labels: Record<string, string>) =>
      sampleValue(f, "booking_sync_requests_total", labels);
    expect(requests({ endpoint, outcome: "retry", status: "503" })).toBe(1);
    expect(requests({ endpoint, outcome: "retry", status: "none" })).toBe(1);
    expect(requests({ endpoint, outcome: "ok", status: "200" })).toBe(1);
    expect(requests({ endpoint: "list-bookings", outcome: "error", status: "401" })).toBe(1);
    expect(sampleValue(f, "booking_sync_retries_total", { endpoint })).toBe(2);
    expect(sampleValue(f, "booking_sync_retries_total", { endpoint: "list-bookings" })).toBeUndefined();
    expect(sampleValue(f, "booking_sync_request_duration_seconds_count", { endpoint })).toBe(3);
  });

  it("computes checkpoint lag at scrape time from the stored checkpoint", async () => {
    let now = new Date("2026-03-01T10:00:00.000Z");
    let checkpoint: string | null = null;
    const metrics = createMetrics({
      processMetrics: false,
      clock: { now: () => now },
      readCheckpoints: () => ({ all: checkpoint }),
    });
    const lag = async () =>
      sampleValue(await scrape(metrics), "booking_sync_checkpoint_lag_seconds", { stream: "all" });
    // No checkpoint yet: no sample at all, rather than a lag of 0 that looks healthy.
    expect((await scrape(metrics)).get("booking_sync_checkpoint_lag_seconds")?.samples).toEqual([]);
    checkpoint = "2026-03-01T09:58:30.000Z";
    expect(await lag()).toBe(90);
    now = new Date("2026-03-01T10:10:00.000Z");
    expect(await lag()).toBe(690);
  });

  it("falls back to the last run's checkpoint, and survives a failing checkpoint reader", async () => {
    const now = new Date("2026-03-01T10:00:00.000Z");
    const fromRuns = createMetrics({ processMetrics: false, clock: { now: () => now } });
    fromRuns.recordRun(report({ stream: "IN", checkpointAfter: "2026-03-01T09:59:00.000Z" }));
    const lag = sampleValue(await scrape(fromRuns), "booking_sync_checkpoint_lag_seconds", { stream: "IN" });
    expect(lag).toBe(60);

    const closed = createMetrics({
      processMetrics: false,
      readCheckpoints: () => {
        throw new Error("database is closed");
      },
    });
    expect((await scrape(closed)).get("booking_sync_checkpoint_lag_seconds")?.samples).toEqual([]);
  });

  it("reads the events figures once a scrape; the webhook's only when one was configured", async () => {
    const delivery: NonNullable<EventsStatus["delivery"]> = {
      cursor: 70,
      lagEvents: 50,
      lagSeconds: 42,
      attempts: 3,
      lastError: "HTTP 503",
      lastErrorAt: "2026-03-01T09:59:00.000Z",
      nextAttemptAt: "2026-03-01T10:01:00.000Z",
      lastDeliveredAt: null,
      dropped: 40,
      droppedAt: "2026-03-01T09:58:00.000Z",
    };
    let events: EventsStatus | null = { lastId: 120, oldest: null, delivery: null };
    let reads = 0;
    let closed = false;
    const metrics = createMetrics({
      processMetrics: false,
      readEvents: async () => {
        reads++;
        if (closed) throw new Error("database is closed");
        return events;
      },
    });
    const sink = { sink: "webhook" };
    const delivered = ["delivered_id", "lag_events", "lag_seconds", "failed_attempts", "dropped_total"].map(
      (m) => `booking_sync_events_${m}`,
    );
    let f = await scrape(metrics);
    expect(reads).toBe(1);
    expect(sampleValue(f, "booking_sync_events_last_id")).toBe(120);
    for (const name of delivered) expect(f.get(name)?.samples, name).toEqual([]);
    expect(f.get("booking_sync_events_dropped_total")?.type).toBe("counter");
    expect(f.get("booking_sync_events_dropped_total")?.help).toMatch(/read from the database/);

    events = { lastId: 120, oldest: { id: 1, at: "2026-03-01T09:00:00.000Z" }, delivery };
    f = await scrape(metrics);
    expect(reads).toBe(2);
    expect(delivered.map((name) => sampleValue(f, name, sink))).toEqual([70, 50, 42, 3, 40]);
    // The counter is the database's total, not a sum of reads.
    f = await scrape(metrics);
    expect(sampleValue(f, "booking_sync_events_dropped_total", sink)).toBe(40);

    // A mirror older than the events tables, then a database closing: no figure, and the scrape holds.
    for (const [then, fail] of [
      [null, false],
      [events, true],
    ] as const) {
      events = then;
      closed = fail;
      f = await scrape(metrics);
      expect(sampleValue(f, "booking_sync_events_last_id")).toBe(0);
      for (const name of delivered) expect(f.get(name)?.samples, name).toEqual([]);
    }
    expect(
      createMetrics({ processMetrics: false }).registry.getSingleMetric("booking_sync_events_last_id"),
    ).toBeUndefined();
  });

  it("reports drift, repairs, details not found, skipped ticks, and keeps registries apart", async () => {
    const a = createMetrics({ processMetrics: false });
    const b = createMetrics({ processMetrics: false });
    a.recordDrift({ sourceTotal: 1000, localTotal: 990 });
    a.recordSkippedTick();
    a.recordSkippedTick();
    a.recordRepair({ gaps: 2, repaired: 37 });
    a.recordRepair({ gaps: 0, repaired: 0 });
    a.recordDetails({ missed: 4 });
    a.recordDetails({ missed: 1 });
    const fa = await scrape(a);
    expect(sampleValue(fa, "booking_sync_details_not_found_total")).toBe(5);
    expect(sampleValue(fa, "booking_sync_gaps_found_total")).toBe(2);
    expect(sampleValue(fa, "booking_sync_bookings_repaired_total")).toBe(37);
    expect(sampleValue(fa, "booking_sync_drift_bookings")).toBe(10);
    expect(sampleValue(fa, "booking_sync_source_bookings")).toBe(1000);
    expect(sampleValue(fa, "booking_sync_local_bookings")).toBe(990);
    expect(sampleValue(fa, "booking_sync_skipped_ticks_total")).toBe(2);
    expect(sampleValue(await scrape(b), "booking_sync_skipped_ticks_total")).toBe(0);
  });

  it("the parser rejects malformed text (so the checks above can fail)", () => {
    expect(() => parsePrometheusText("booking_sync_x 1\n")).toThrow(/undeclared family/);
    expect(() => parsePrometheusText("# TYPE a counter\na{b=c} 1\n")).toThrow(/not a sample/);
    expect(() => parsePrometheusText("# TYPE a counter\na one\n")).toThrow(/not a sample/);
    expect(() => parsePrometheusText("# TYPE a bogus\n")).toThrow(/unknown type/);
    expect(parsePrometheusText('# TYPE a gauge\na Nan\na{x="y"} +Inf\n').get("a")?.samples).toHaveLength(2);
  });
});
