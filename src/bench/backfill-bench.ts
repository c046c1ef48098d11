/**
 * Benchmark: a backfill at concurrency 1 against one at concurrency 8 (or `--concurrency`), each
 * into a fresh temp database, over a simulator with per-request latency.
 *
 *   npm run bench:backfill -- [--bookings 20000] [--latency-ms 50] [--concurrency 8]
 *
 * The simulator runs in its own process so it does not share our event loop, and each backfill in
 * a fresh process so its peak RSS (sampled every 100 ms) is its own. Prints the figures; asserts
 * nothing (targets: ≥ 6x faster at concurrency 8 with 50 ms latency; peak RSS under 150 MB
 * whatever the number of bookings).
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { createApiClient } from "../api/client.js";
import { systemClock } from "../app.js";
import { createLogger } from "../logger.js";
import { openStore } from "../store/index.js";
import { runBackfill } from "../sync/backfill.js";
import { startSimulatorProcess } from "./simulator-process.js";

const SELF = new URL(import.meta.url).pathname;
const TOKEN = "sim-token";

interface Result {
  concurrency: number;
  bookings: number;
  pages: number;
  ms: number;
  peakRssMb: number;
}

/** One backfill in this process: prints a Result as JSON on the last line. */
async function runOne(url: string, concurrency: number): Promise<void> {
  let peak = process.memoryUsage().rss;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 100);
  const dir = mkdtempSync(join(tmpdir(), "booking-sync-bench-"));
  const store = openStore(join(dir, "bench.db"));
  const started = performance.now();
  try {
    const report = await runBackfill(
      {
        api: createApiClient({ baseUrl: url, token: TOKEN }),
        store,
        clock: systemClock,
        logger: createLogger({ level: "warn" }),
        signal: new AbortController().signal,
      },
      { concurrency },
    );
    if (report.status !== "success") throw report.error;
    const ms = performance.now() - started;
    peak = Math.max(peak, process.memoryUsage().rss);
    const result: Result = {
      concurrency,
      bookings: report.inserted,
      pages: report.pages,
      ms,
      peakRssMb: peak / 2 ** 20,
    };
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } finally {
    clearInterval(sampler);
    store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

function measure(url: string, concurrency: number): Result {
  const out = execFileSync(process.execPath, [SELF, "--url", url, "--run", String(concurrency)], {
    encoding: "utf8",
    maxBuffer: 1 << 20,
  });
  return JSON.parse(out.trim().split("\n").at(-1) as string) as Result;
}

function line(r: Result): string {
  return (
    `concurrency ${String(r.concurrency).padStart(2)}: ${r.bookings} bookings, ${r.pages} pages in ` +
    `${(r.ms / 1000).toFixed(2)} s = ${Math.round(r.bookings / (r.ms / 1000))} bookings/s, peak RSS ${r.peakRssMb.toFixed(0)} MB`
  );
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      url: { type: "string" },
      run: { type: "string" },
      bookings: { type: "string", default: "20000" },
      "latency-ms": { type: "string", default: "50" },
      concurrency: { type: "string", default: "8" },
    },
  });
  if (values.run) return runOne(values.url as string, Number(values.run));

  const bookings = Number(values.bookings);
  const { url, child } = await startSimulatorProcess(bookings, Number(values["latency-ms"]));
  try {
    console.log(
      `backfill of ${bookings} bookings, latency ${values["latency-ms"]} ms, simulator in its own process`,
    );
    const serial = measure(url, 1);
    console.log(line(serial));
    const parallel = measure(url, Number(values.concurrency));
    console.log(line(parallel));
    console.log(`speed-up ${(serial.ms / parallel.ms).toFixed(2)}x (target >= 6x at concurrency 8)`);
  } finally {
    child.kill("SIGTERM");
  }
}

await main();
