/**
 * Benchmark: a cold sync against a bare fetch-and-parse loop over the same feed pages.
 *
 *   npm run bench -- [--bookings 200000] [--page-size 100] [--latency-ms 0] [--rounds 3]
 *
 * The simulator runs in its own process so it does not share our event loop, and each mode runs in
 * a fresh process so its peak RSS is its own. Prints the figures; asserts nothing (targets in
 * docs/performance.md).
 *
 * Besides wall time and peak RSS, each mode reports its CPU time and the peaks of the
 * main thread's V8 heap and of memory outside it (`external`: buffers and the like), sampled every
 * 50 ms; RSS beyond those is native: code, thread stacks, SQLite's page cache, other isolates.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { createApiClient } from "../dist/api/client.js";
import { systemClock } from "../dist/app.js";
import { createLogger } from "../dist/logger.js";
import { openStore } from "../dist/store/index.js";
import { runSync } from "../dist/sync/run-sync.js";
import { startSimulatorProcess } from "./simulator-process.js";

const SELF = new URL(import.meta.url).pathname;
/**
 * Each measured run is a fresh process started as this one was (with the memory flags
 * `npm run bench` passes, the launcher's), so it runs as the CLI does.
 */
const NODE_ARGS = process.execArgv;
const TOKEN = "sim-token";

type Mode = "bare" | "sync";

interface Result {
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

/** One mode, in this process: prints a Result as JSON on the last line. */
async function runMode(mode: Mode, url: string, pageSize: number): Promise<void> {
  const stopSampling = sampleMemory();
  const started = performance.now();
  let bookings = 0;
  let pages = 0;
  if (mode === "bare") {
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
      if (!body.data.hasMore || !body.data.nextCursor) break;
      cursor = body.data.nextCursor;
    }
  } else {
    const dir = mkdtempSync(join(tmpdir(), "booking-sync-bench-"));
    const store = openStore(join(dir, "bench.db"));
    const logger = createLogger({ level: "warn" });
    const api = createApiClient({ baseUrl: url, token: TOKEN });
    const signal = new AbortController().signal;
    const report = await runSync(
      { api, store, clock: systemClock, logger, signal },
      { pageSize, lookbackSeconds: 600 },
    );
    store.close();
    rmSync(dir, { recursive: true, force: true });
    if (report.status !== "success") throw report.error;
    bookings = report.inserted;
    pages = report.pages;
  }
  const ms = performance.now() - started;
  const usage = process.resourceUsage();
  const peaks = stopSampling();
  const result: Result = {
    mode,
    bookings,
    pages,
    ms,
    cpuMs: (usage.userCPUTime + usage.systemCPUTime) / 1000,
    peakRssMb: usage.maxRSS / 1024,
    peakHeapMb: peaks.heap,
    peakExternalMb: peaks.external,
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

function measure(mode: string, url: string, pageSize: number): Result {
  const out = execFileSync(
    process.execPath,
    [...NODE_ARGS, SELF, "--mode", mode, "--url", url, "--page-size", String(pageSize)],
    {
      encoding: "utf8",
      maxBuffer: 1 << 20,
    },
  );
  return JSON.parse(out.trim().split("\n").at(-1) as string) as Result;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      mode: { type: "string" },
      url: { type: "string" },
      bookings: { type: "string", default: "200000" },
      "page-size": { type: "string", default: "100" },
      "latency-ms": { type: "string", default: "0" },
      rounds: { type: "string", default: "3" },
    },
  });
  const pageSize = Number(values["page-size"]);
  if (values.mode === "bare" || values.mode === "sync")
    return runMode(values.mode, values.url as string, pageSize);

  const bookings = Number(values.bookings);
  const { url, child } = await startSimulatorProcess(bookings, Number(values["latency-ms"]));
  try {
    console.log(
      `feed of ${bookings} bookings, ${pageSize} a page, latency ${values["latency-ms"]} ms, simulator in its own process`,
    );
    const best = (mode: string) => {
      const runs = Array.from({ length: Number(values.rounds) }, () => measure(mode, url, pageSize));
      return runs.reduce((a, b) => (b.ms < a.ms ? b : a));
    };
    const bare = best("bare");
    const sync = best("sync");
    for (const r of [bare, sync]) {
      console.log(
        `${r.mode.padEnd(11)} ${r.bookings} bookings, ${r.pages} pages in ${(r.ms / 1000).toFixed(2)} s` +
          ` = ${Math.round(r.bookings / (r.ms / 1000))} bookings/s, CPU ${(r.cpuMs / 1000).toFixed(2)} s,` +
          ` peak RSS ${r.peakRssMb.toFixed(0)} MB (main heap ${r.peakHeapMb.toFixed(0)} MB,` +
          ` external ${r.peakExternalMb.toFixed(0)} MB)`,
      );
    }
    console.log(
      `sync / bare = ${(sync.ms / bare.ms).toFixed(2)}x (target <= 1.15x); best of ${values.rounds} each`,
    );
  } finally {
    child.kill("SIGTERM");
  }
}

await main();
