/**
 * Benchmark: a backfill at concurrency 1 against one at concurrency 8 (or `--concurrency`), each
 * into a fresh temp database, over a simulator with per-request latency.
 *
 *   npm run bench:backfill -- [--bookings 20000] [--latency-ms 50] [--concurrency 8] [--rounds 3]
 *   node dist-bench/backfill-bench.js --url <simulator URL> --run <concurrency>
 *
 * The second form runs one backfill against a simulator already running and prints its figures as
 * JSON: interleaving it over two builds is how a change is judged (docs/performance.md).
 *
 * The simulator runs in its own process so it does not share our event loop, and each backfill in
 * a fresh process, so its peak RSS (the kernel's high-water mark) is its own. The two concurrencies alternate over several
 * rounds, so a machine whose speed drifts affects both alike; the speed-up printed is the median
 * round's. Each run also reports its CPU time per page (all threads): with latency, concurrency
 * only helps until the cores are busy, so one page's time at concurrency 1 over that CPU time per
 * core is about as far as the speed-up can go on this machine; it is printed too. Prints the
 * figures; asserts nothing (targets: ≥ 6x faster at concurrency 8 with 50 ms latency; peak RSS
 * under 150 MB whatever the number of bookings).
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { createApiClient } from "../dist/api/client.js";
import { systemClock } from "../dist/app.js";
import { createLogger } from "../dist/logger.js";
import { openStore } from "../dist/store/index.js";
import { runBackfill } from "../dist/sync/backfill/backfill.js";
import { startSimulatorProcess } from "./simulator-process.js";

const SELF = new URL(import.meta.url).pathname;
const TOKEN = "sim-token";

interface Result {
  concurrency: number;
  bookings: number;
  pages: number;
  ms: number;
  /** CPU time of the whole process (every thread) during the backfill, per page. */
  cpuMsPerPage: number;
  peakRssMb: number;
}

/** One backfill in this process: prints a Result as JSON on the last line. */
async function runOne(url: string, concurrency: number): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "booking-sync-bench-"));
  const store = openStore(join(dir, "bench.db"));
  const started = performance.now();
  const cpuBefore = process.cpuUsage();
  try {
    const report = await runBackfill(
      {
        api: createApiClient({ baseUrl: url, token: TOKEN, maxInFlight: concurrency }),
        store,
        clock: systemClock,
        logger: createLogger({ level: "warn" }),
        signal: new AbortController().signal,
      },
      { concurrency },
    );
    if (report.status !== "success") throw report.error;
    const ms = performance.now() - started;
    const cpu = process.cpuUsage(cpuBefore);
    const result: Result = {
      concurrency,
      bookings: report.inserted,
      pages: report.pages,
      ms,
      cpuMsPerPage: (cpu.user + cpu.system) / 1000 / Math.max(1, report.pages),
      // ru_maxrss, in KiB on Linux: the process's peak, threads included.
      peakRssMb: process.resourceUsage().maxRSS / 1024,
    };
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } finally {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

function measure(url: string, concurrency: number): Result {
  const out = execFileSync(
    process.execPath,
    // Started as this process was (with the launcher's memory flags `npm run` passes).
    [...process.execArgv, SELF, "--url", url, "--run", String(concurrency)],
    {
      encoding: "utf8",
      maxBuffer: 1 << 20,
    },
  );
  return JSON.parse(out.trim().split("\n").at(-1) as string) as Result;
}

function median(xs: number[]): number {
  const sorted = [...xs].sort((x, y) => x - y);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

function line(r: Result): string {
  return (
    `concurrency ${String(r.concurrency).padStart(2)}: ${r.bookings} bookings, ${r.pages} pages in ` +
    `${(r.ms / 1000).toFixed(2)} s = ${Math.round(r.bookings / (r.ms / 1000))} bookings/s, ` +
    `CPU ${r.cpuMsPerPage.toFixed(1)} ms/page, peak RSS ${r.peakRssMb.toFixed(0)} MB`
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
      rounds: { type: "string", default: "3" },
    },
  });
  if (values.run) return runOne(values.url as string, Number(values.run));

  const bookings = Number(values.bookings);
  const cores = availableParallelism();
  const { url, child } = await startSimulatorProcess(bookings, Number(values["latency-ms"]));
  try {
    console.log(
      `backfill of ${bookings} bookings, latency ${values["latency-ms"]} ms, simulator in its own process`,
    );
    const concurrency = Number(values.concurrency);
    // One run first, not counted: the simulator serializes each booking once and serves it from
    // its cache afterwards (a real API's work is not on this machine), so every measured run meets
    // the same, warm, simulator.
    measure(url, concurrency);
    const ratios: number[] = [];
    const ceilings: number[] = [];
    let peak = 0;
    for (let round = 1; round <= Number(values.rounds); round++) {
      // Alternate which goes first, so neither always runs on a warmer machine.
      const order = round % 2 ? [1, concurrency] : [concurrency, 1];
      const [a, b] = order.map((c) => measure(url, c)) as [Result, Result];
      const [serial, parallel] = a.concurrency === 1 ? [a, b] : [b, a];
      console.log(`round ${round}`);
      console.log(`  ${line(serial)}`);
      console.log(`  ${line(parallel)}`);
      ratios.push(serial.ms / parallel.ms);
      // However the work is spread, a page cannot take less than its CPU time over the cores.
      ceilings.push(serial.ms / serial.pages / (parallel.cpuMsPerPage / cores));
      peak = Math.max(peak, serial.peakRssMb, parallel.peakRssMb);
    }
    console.log(
      `speed-up ${median(ratios).toFixed(2)}x (median; rounds ${ratios.map((r) => r.toFixed(2)).join(", ")}; target >= 6x at concurrency 8)`,
    );
    console.log(
      `on ${cores} cores the CPU a page costs caps the speed-up near ${median(ceilings).toFixed(1)}x (concurrency 1's time per page over concurrency ${concurrency}'s CPU per page per core)`,
    );
    console.log(`peak RSS ${peak.toFixed(0)} MB (target < 150 MB)`);
  } finally {
    child.kill("SIGTERM");
  }
}

await main();
