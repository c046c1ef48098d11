/**
 * The measured side of the sync benchmark (bench/sync-bench.ts): one mode, run in a process of its
 * own, printing its figures as JSON.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createApiClient } from "../dist/api/client.js";
import { systemClock } from "../dist/app.js";
import type { Database } from "../dist/config/config.js";
import { DEFAULT_CONCURRENCY } from "../dist/config/settings.js";
import { createLogger } from "../dist/logger.js";
import { openMirror } from "../dist/store/index.js";
import { cursorFor } from "../dist/sync/feed/window.js";
import { runSync } from "../dist/sync/run-sync.js";

const TOKEN = "sim-token";

/**
 * `bare` fetches and parses; `client` walks the same pages through the sync's API client (got, the
 * retry policy, the checks of each record) and keeps nothing, so `sync` against it is the store's
 * share of a page and it against `bare` the client's; `sync` syncs into a fresh SQLite file one page at a time (an everyday
 * sync's walk, so the ratio is a page's own cost), `sync-postgres` the same into a fresh database;
 * `sync-default` into a fresh SQLite file at SYNC_CONCURRENCY's default, as `booking-sync sync
 * --no-details` runs on an empty mirror: its fill walks the feed in slices, several pages in flight.
 */
export const MODES = ["bare", "sync", "sync-postgres", "sync-default", "client"] as const;
export type Mode = (typeof MODES)[number];

export interface Result {
  mode: string;
  bookings: number;
  pages: number;
  ms: number;
  /** User and system CPU of the whole process, ms. */
  cpuMs: number;
  peakRssMb: number;
  /** Peak V8 heap (committed) of the main thread, MB. */
  peakHeapMb: number;
  /** Peak memory held outside V8 heaps by JS objects (buffers), MB. */
  peakExternalMb: number;
  /** CPU of the PostgreSQL server's processes during the run, ms, when known. */
  serverCpuMs?: number | undefined;
}

/** Samples the main thread's heap and external memory; returns their peaks in MB when stopped. */
function sampleMemory(): () => { heap: number; external: number } {
  let heap = 0;
  let external = 0;
  const sample = () => {
    const m = process.memoryUsage();
    heap = Math.max(heap, m.heapTotal);
    external = Math.max(external, m.external);
  };
  const timer = setInterval(sample, 50);
  return () => {
    clearInterval(timer);
    sample();
    return { heap: heap / 2 ** 20, external: external / 2 ** 20 };
  };
}

/** The bare loop: every feed page fetched and parsed, nothing kept. */
async function fetchAll(url: string, pageSize: number): Promise<{ bookings: number; pages: number }> {
  let bookings = 0;
  let pages = 0;
  let cursor: string | null = null;
  for (;;) {
    const qs = new URLSearchParams({ limit: String(pageSize), ...(cursor ? { cursor } : {}) });
    const res = await fetch(`${url}/partner/booking/fetch-recent-bookings?${qs}`, {
      headers: { authorization: `Bearer ${TOKEN}`, accept: "application/json" },
    });
    const body = JSON.parse(await res.text()) as {
      data: { bookings: unknown[]; nextCursor: string | null; hasMore: boolean };
    };
    pages++;
    bookings += body.data.bookings.length;
    if (!body.data.hasMore || !body.data.nextCursor) return { bookings, pages };
    cursor = body.data.nextCursor;
  }
}

/**
 * The feed walked through the API client, one page at a time, nothing kept: each page asked for
 * below its last booking's time, as the walk asks (one booking read again a page).
 */
async function walkClient(url: string, pageSize: number): Promise<{ bookings: number; pages: number }> {
  const api = createApiClient({ baseUrl: url, token: TOKEN, maxInFlight: 1 });
  let bookings = 0;
  let pages = 0;
  let upTo: string | null = null;
  for (;;) {
    const page = await api.fetchRecent({ limit: pageSize, cursor: cursorFor(upTo) });
    pages++;
    bookings += page.records.length;
    const last = page.records.at(-1);
    if (!page.hasMore || !last?.ok) return { bookings, pages };
    upTo = last.at;
  }
}

/** A cold sync into `database`, opened (and migrated) as the CLI opens it. */
async function syncInto(database: Database, url: string, pageSize: number, concurrency = 1) {
  const store = await openMirror(database);
  const report = await runSync(
    {
      api: createApiClient({ baseUrl: url, token: TOKEN, maxInFlight: concurrency }),
      store,
      clock: systemClock,
      logger: createLogger({ level: "warn" }),
      signal: new AbortController().signal,
    },
    { pageSize, lookbackSeconds: 600, concurrency },
  );
  await store.close();
  if (report.status !== "success") throw report.error;
  return { bookings: report.inserted, pages: report.pages };
}

/** One mode, in this process: prints a Result as JSON on the last line. */
export async function runMode(
  mode: Mode,
  url: string,
  pageSize: number,
  databaseUrl?: string,
): Promise<void> {
  const stopSampling = sampleMemory();
  const started = performance.now();
  let done: { bookings: number; pages: number };
  if (mode === "bare") done = await fetchAll(url, pageSize);
  else if (mode === "client") done = await walkClient(url, pageSize);
  else if (mode === "sync-postgres") {
    if (!databaseUrl) throw new Error("--database: a PostgreSQL URL is required for sync-postgres");
    done = await syncInto({ kind: "postgres", url: databaseUrl, password: undefined }, url, pageSize);
  } else {
    const dir = mkdtempSync(join(tmpdir(), "booking-sync-bench-"));
    const concurrency = mode === "sync-default" ? DEFAULT_CONCURRENCY : 1;
    try {
      done = await syncInto({ kind: "sqlite", path: join(dir, "bench.db") }, url, pageSize, concurrency);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  const ms = performance.now() - started;
  const usage = process.resourceUsage();
  const peaks = stopSampling();
  const result: Result = {
    mode,
    ...done,
    ms,
    cpuMs: (usage.userCPUTime + usage.systemCPUTime) / 1000,
    peakRssMb: usage.maxRSS / 1024,
    peakHeapMb: peaks.heap,
    peakExternalMb: peaks.external,
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
}
