/**
 * The cold-start figure of `npm run bench` (bench/sync-bench.ts, where its flags are documented):
 * `booking-sync run`, the built CLI as a sidecar starts it, on an empty SQLite mirror, timed until
 * every booking the source serves is in the mirror with details; against its floor, the same
 * list-bookings pages (100 a page) fetched `concurrency` at a time with `JSON.parse` and nothing
 * else. Both meet the same simulator, in its own process, its record cache warmed first.
 *
 * The mirror is polled read-only every POLL_MS (bench/mirror-watch.ts), so the time is the
 * daemon's, give or take a poll. Peak RSS is the daemon's VmHWM (threads included), CPU its user
 * and system time, both from /proc when it is complete (or given up on); requests are the
 * simulator's count while the daemon ran. Then the daemon gets SIGTERM and is waited for. Prints
 * the figures; asserts nothing (targets in docs/performance.md and issue 24).
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { once } from "node:events";
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { SETTINGS } from "../dist/config/settings.js";
import type { SimulatorStats } from "../dist/simulator/index.js";
import { watchMirror } from "./mirror-watch.js";
import { startSimulatorProcess } from "./simulator-process.js";

const CLI = new URL("../dist/cli.js", import.meta.url).pathname;
const TOKEN = "sim-token";
const PAGE_SIZE = 100;
const POLL_MS = 100;
/** How long the daemon may take to stop after SIGTERM before it is killed (its own deadline is 10 s). */
const STOP_WAIT_MS = 30_000;

export interface ColdStartOptions {
  bookings: number;
  latencyMs: number;
  /** SYNC_CONCURRENCY of the daemon, and pages in flight of the floor. */
  concurrency: number;
  /** Give up (and say so) when the mirror is not complete after this many seconds. */
  timeoutS: number;
}

/** The targets, printed beside the figures measured at their settings. */
const TARGETS = [
  { bookings: 50_000, latencyMs: 50, concurrency: 8, ratio: 3 },
  { bookings: 1_000_000, latencyMs: 100, concurrency: 16, seconds: 180, rssMb: 150 },
];

/**
 * The floor: the first `pages` list pages of a source of `total` bookings, fetched `concurrency` at a
 * time and parsed; resolves with ms.
 */
async function bareListFetch(
  url: string,
  total: number,
  pages: number,
  concurrency: number,
): Promise<number> {
  let next = 1;
  let served = 0;
  const worker = async () => {
    for (let page = next++; page <= pages; page = next++) {
      const qs = new URLSearchParams({ page: String(page), pageSize: String(PAGE_SIZE) });
      const res = await fetch(`${url}/partner/booking/list-bookings?${qs}`, {
        headers: { authorization: `Bearer ${TOKEN}`, accept: "application/json" },
      });
      const body = JSON.parse(await res.text()) as { data: unknown[] };
      served += body.data.length;
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: concurrency }, worker));
  const ms = performance.now() - started;
  const expected = Math.min(total, pages * PAGE_SIZE);
  if (served !== expected) throw new Error(`the floor read ${served} bookings, not ${expected}`);
  return ms;
}

/** What the source says it serves: list-bookings' total. */
async function sourceTotal(url: string): Promise<number> {
  const res = await fetch(`${url}/partner/booking/list-bookings?page=1&pageSize=1`, {
    headers: { authorization: `Bearer ${TOKEN}` },
  });
  return (JSON.parse(await res.text()) as { pagination: { total: number } }).pagination.total;
}

/** The node flags the CLI's `#!/usr/bin/env -S node ...` line starts it with. */
export function launcherFlags(): string[] {
  const first = readFileSync(CLI, "utf8").split("\n", 1)[0] ?? "";
  return (/^#!.*\bnode\b(.*)$/.exec(first)?.[1] ?? "").split(" ").filter(Boolean);
}

/** Our environment without any setting of the CLI's, so every setting not named here is its default. */
export function daemonEnv(url: string, dbPath: string, concurrency: number): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const setting of SETTINGS) if (setting.env) delete env[setting.env];
  return {
    ...env,
    BOOKING_API_BASE_URL: url,
    BOOKING_API_TOKEN: TOKEN,
    BOOKING_DB_PATH: dbPath,
    HTTP_PORT: "0",
    // Both names, so the figure holds whichever the config reads.
    SYNC_CONCURRENCY: String(concurrency),
    BACKFILL_CONCURRENCY: String(concurrency),
  };
}

/** Peak RSS (VmHWM), MB, and CPU seconds (user + system) of a live process, from /proc. */
export function usageOf(pid: number): { peakRssMb: number; cpuS: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const hwmKb = Number(/^VmHWM:\s+(\d+) kB/m.exec(status)?.[1] ?? Number.NaN);
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  // Fields after the command name, which may hold spaces: utime and stime are the 12th and 13th.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const ticks = Number(fields[11]) + Number(fields[12]);
  return { peakRssMb: hwmKb / 1024, cpuS: ticks / clockTicks() };
}

let ticksPerSecond: number | undefined;
/** Clock ticks a second, the unit of /proc's CPU times. */
export function clockTicks(): number {
  ticksPerSecond ??= Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" })) || 100;
  return ticksPerSecond;
}

interface RunResult {
  /** ms to a complete mirror, or undefined when it was not complete by the timeout. */
  ms: number | undefined;
  bookings: number;
  lackingDetails: number;
  peakRssMb: number;
  cpuS: number;
  simulatorCpuS: number;
  requests: SimulatorStats | undefined;
  /** Exit code (or signal) after SIGTERM, and how long it took. */
  exit: string;
  stopMs: number;
}

/** Sends SIGTERM and waits for the exit; kills it past STOP_WAIT_MS. */
export async function stop(daemon: ChildProcess): Promise<{ exit: string; stopMs: number }> {
  const started = performance.now();
  const exited = once(daemon, "exit") as Promise<[number | null, NodeJS.Signals | null]>;
  daemon.kill("SIGTERM");
  const timer = setTimeout(() => daemon.kill("SIGKILL"), STOP_WAIT_MS);
  const [code, signal] = await exited;
  clearTimeout(timer);
  return {
    exit: code !== null ? `exit ${code}` : `killed by ${signal}`,
    stopMs: performance.now() - started,
  };
}

/** `run` on an empty mirror in `dir` until it holds `total` bookings with details, or the timeout. */
async function timeRun(
  sim: Awaited<ReturnType<typeof startSimulatorProcess>>,
  dir: string,
  total: number,
  options: ColdStartOptions,
): Promise<RunResult> {
  const dbPath = join(dir, "mirror.db");
  const logPath = join(dir, "daemon.log");
  const log = openSync(logPath, "w");
  await sim.resetStats();
  const simulatorBefore = usageOf(sim.child.pid as number).cpuS;
  const watch = watchMirror(dbPath);
  const started = performance.now();
  const daemon = spawn(process.execPath, [...launcherFlags(), CLI, "run"], {
    env: daemonEnv(sim.url, dbPath, options.concurrency),
    stdio: ["ignore", log, log],
  });
  closeSync(log);
  const killDaemon = () => daemon.kill("SIGKILL");
  process.once("exit", killDaemon);
  try {
    const deadline = started + options.timeoutS * 1000;
    let ms: number | undefined;
    while (ms === undefined && performance.now() < deadline) {
      if (daemon.exitCode !== null || daemon.signalCode !== null) {
        const tail = readFileSync(logPath, "utf8").slice(-3000);
        throw new Error(
          `booking-sync run exited (${daemon.exitCode ?? daemon.signalCode}) before the mirror was complete:\n${tail}`,
        );
      }
      if (watch.complete(total)) ms = performance.now() - started;
      else await sleep(POLL_MS);
    }
    const usage = usageOf(daemon.pid as number);
    const simulatorCpuS = usageOf(sim.child.pid as number).cpuS - simulatorBefore;
    const requests = await sim.stats().catch(() => undefined);
    const fill = watch.fill();
    return { ms, ...fill, ...usage, simulatorCpuS, requests, ...(await stop(daemon)) };
  } finally {
    watch.close();
    process.off("exit", killDaemon);
    if (daemon.exitCode === null && daemon.signalCode === null) killDaemon();
  }
}

const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

function print(options: ColdStartOptions, total: number, floorMs: number, run: RunResult): void {
  const target = TARGETS.find(
    (t) => t.bookings === total && t.latencyMs === options.latencyMs && t.concurrency === options.concurrency,
  );
  const c = options.concurrency;
  console.log(
    `floor:  ${Math.ceil(total / PAGE_SIZE)} list-bookings pages of ${PAGE_SIZE}, ${c} at a time, JSON.parse only: ${s(floorMs)}`,
  );
  const done =
    run.ms === undefined
      ? `NOT complete after ${options.timeoutS} s: ${run.bookings} of ${total} bookings, ${run.lackingDetails} lacking details`
      : `every booking with details in ${s(run.ms)}`;
  const seconds = target?.seconds ? ` (target <= ${target.seconds} s)` : "";
  console.log(`run:    ${done}${seconds}`);
  const perHundred = (run.cpuS * 1000 * PAGE_SIZE) / Math.max(1, run.bookings);
  const rss = target?.rssMb ? ` (target <= ${target.rssMb} MB)` : "";
  console.log(
    `        CPU ${run.cpuS.toFixed(1)} s (${perHundred.toFixed(1)} ms per 100 bookings; the simulator's ${run.simulatorCpuS.toFixed(1)} s),` +
      ` peak RSS ${run.peakRssMb.toFixed(0)} MB${rss}`,
  );
  const r = run.requests;
  if (r) {
    console.log(
      `        ${r.requests} requests (feed ${r.byEndpoint.feed}, list ${r.byEndpoint.list}, statuses ${JSON.stringify(r.byStatus)})`,
    );
  }
  console.log(`        SIGTERM: ${run.exit} after ${s(run.stopMs)}`);
  if (run.ms !== undefined) {
    const ratio = target?.ratio ? ` (target <= ${target.ratio}x)` : "";
    console.log(`run / floor = ${(run.ms / floorMs).toFixed(2)}x${ratio}`);
  } else {
    console.log(`run / floor > ${((options.timeoutS * 1000) / floorMs).toFixed(1)}x (not complete)`);
  }
}

/** Measures and prints the cold-start figure: its own simulator, the floor, then `run`. */
export async function coldStart(options: ColdStartOptions): Promise<void> {
  const sim = await startSimulatorProcess(options.bookings, options.latencyMs);
  const dir = mkdtempSync(join(tmpdir(), "booking-sync-cold-"));
  try {
    const total = await sourceTotal(sim.url);
    const warmed = await sim.warm();
    console.log(
      `cold start: ${total} bookings, latency ${options.latencyMs} ms, SYNC_CONCURRENCY=${options.concurrency}, ` +
        `simulator in its own process (${warmed} bookings in its cache)`,
    );
    // A few pages first, not counted, so the floor does not pay for loading and warming fetch.
    const pages = Math.ceil(total / PAGE_SIZE);
    await bareListFetch(sim.url, total, Math.min(pages, 2 * options.concurrency), options.concurrency);
    const floorMs = await bareListFetch(sim.url, total, pages, options.concurrency);
    const run = await timeRun(sim, dir, total, options);
    print(options, total, floorMs, run);
  } finally {
    sim.child.kill("SIGTERM");
    rmSync(dir, { recursive: true, force: true });
  }
}
