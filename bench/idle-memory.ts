/**
 * Benchmark: what the sidecar holds once idle. Starts the simulator and `booking-sync run` (the
 * built CLI, or `--cli` another build, as its `#!` line starts it) with a fresh database, waits for its first sync to finish,
 * lets it idle, sampling its resident memory, and prints it after the sync, at the end of the idle
 * time, the samples' median and range, and the peak. `--runs` repeats it all on fresh databases and
 * prints the median of the runs: one idle RSS moves by a few MB with when V8 last collected.
 *
 *   npm run bench:idle -- [--bookings 20000] [--idle-s 60] [--sample-s 5] [--runs 1]
 *   npm run bench:idle -- --hour                     # idle an hour, a sample a minute, each printed
 *   npm run bench:idle -- --node-options=--max-semi-space-size=4
 *   npm run bench:idle -- --view --idle-s 120      # the HTTP endpoint on, the status page viewed once
 *
 * Prints the figures; asserts nothing (targets in docs/performance.md).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { parseArgs } from "node:util";
import { startSimulatorProcess } from "./simulator-process.js";

const BUILT_CLI = new URL("../dist/cli.js", import.meta.url).pathname;

/** VmRSS and VmHWM of a process, MB (Linux). */
function memoryOf(pid: number): { rssMb: number; peakMb: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (key: string) =>
    Number(new RegExp(`^${key}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? Number.NaN);
  return { rssMb: kb("VmRSS") / 1024, peakMb: kb("VmHWM") / 1024 };
}

/**
 * What a CLI's `#!/usr/bin/env -S [NAME=value ...] node [flags]` line starts it with: the variables
 * set before `node`, and its flags.
 */
function launcher(cli: string): { env: Record<string, string>; flags: string } {
  const first = readFileSync(cli, "utf8").split("\n", 1)[0] ?? "";
  const [, before = "", flags = ""] = /^#!.*?-S\s+(.*?)\bnode\b(.*)$/.exec(first) ?? [];
  const env = Object.fromEntries(
    before
      .split(/\s+/)
      .filter((word) => word.includes("="))
      .map((word) => [word.slice(0, word.indexOf("=")), word.slice(word.indexOf("=") + 1)]),
  );
  return { env, flags: flags.trim() };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;
const mb = (x: number) => x.toFixed(0);

interface Options {
  url: string;
  cli: string;
  nodeArgs: string[];
  /** Variables the launcher line sets; the bench's own environment wins over them. */
  launcherEnv: Record<string, string>;
  idleS: number;
  sampleS: number;
  /** Print each sample as it is taken (the hour-long trend). */
  printSamples: boolean;
  /** Serve HTTP and view the status page once after the sync, as someone checking on it would. */
  view: boolean;
}

interface Run {
  syncS: number;
  afterSync: number;
  idle: number;
  samples: number[];
  peak: number;
}

/** One daemon on a fresh database: its first sync, then `idleS` of idling, sampled. */
async function runOnce(o: Options): Promise<Run> {
  const dir = mkdtempSync(join(tmpdir(), "booking-sync-idle-"));
  const port = o.view ? await freePort() : 0;
  const daemon = spawn(process.execPath, [...o.nodeArgs, o.cli, "run"], {
    env: {
      ...o.launcherEnv,
      ...process.env,
      BOOKING_API_BASE_URL: o.url,
      BOOKING_API_TOKEN: "sim-token",
      BOOKING_DB_PATH: join(dir, "bookings.db"),
      HTTP_PORT: String(port),
      SYNC_SCHEDULE: "0 0 1 1 *",
      LOG_LEVEL: "info",
    },
    stdio: ["ignore", "ignore", "pipe"],
  });
  try {
    const started = performance.now();
    await firstSync(daemon);
    const syncS = (performance.now() - started) / 1000;
    const pid = daemon.pid as number;
    const afterSync = memoryOf(pid).rssMb;
    if (o.view) await viewStatusPage(port);
    const samples: number[] = [];
    for (let t = 0; t < o.idleS; ) {
      const step = Math.min(o.sampleS, o.idleS - t);
      await sleep(step * 1000);
      t += step;
      samples.push(memoryOf(pid).rssMb);
      if (o.printSamples) console.log(`  ${String(t).padStart(5)} s idle: RSS ${mb(samples.at(-1) ?? 0)} MB`);
    }
    const end = memoryOf(pid);
    return { syncS, afterSync, idle: end.rssMb, samples, peak: end.peakMb };
  } finally {
    daemon.kill("SIGTERM");
    await once(daemon, "close");
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A port free on 127.0.0.1 now (the daemon's HTTP_PORT=0 turns its endpoint off). */
async function freePort(): Promise<number> {
  const server = createServer().listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as { port: number };
  server.close();
  return port;
}

/** GET / once, printing its size and time. */
async function viewStatusPage(port: number): Promise<void> {
  const started = performance.now();
  const response = await fetch(`http://127.0.0.1:${port}/`);
  const bytes = (await response.text()).length;
  if (!response.ok) throw new Error(`GET / answered ${response.status}`);
  console.log(`  status page viewed: ${bytes} bytes in ${(performance.now() - started).toFixed(0)} ms`);
}

/** Resolves when the daemon logs its first finished sync; rejects if it exits first. */
async function firstSync(daemon: ChildProcess): Promise<void> {
  let log = "";
  daemon.stderr?.on("data", (d) => (log += d));
  while (!/"msg":"sync finished"/.test(log)) {
    if (daemon.exitCode !== null) throw new Error(`the daemon exited: ${log.slice(-2000)}`);
    await sleep(100);
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      bookings: { type: "string", default: "20000" },
      "idle-s": { type: "string", default: "60" },
      "sample-s": { type: "string", default: "5" },
      runs: { type: "string", default: "1" },
      hour: { type: "boolean", default: false },
      view: { type: "boolean", default: false },
      "node-options": { type: "string" },
      cli: { type: "string", default: BUILT_CLI },
    },
  });
  const idleS = values.hour ? 3600 : Number(values["idle-s"]);
  const sampleS = values.hour ? 60 : Number(values["sample-s"]);
  const { url, child: simulator } = await startSimulatorProcess(Number(values.bookings), 0);
  const launched = launcher(values.cli);
  const nodeArgs = (values["node-options"] ?? launched.flags).split(" ").filter(Boolean);
  const launcherEnv = launched.env;
  const printSamples = values.hour;
  const options = {
    url,
    cli: values.cli,
    nodeArgs,
    launcherEnv,
    idleS,
    sampleS,
    printSamples,
    view: values.view,
  };
  const runs: Run[] = [];
  try {
    for (let i = 0; i < Number(values.runs); i++) {
      const r = await runOnce(options);
      runs.push(r);
      console.log(
        `${values.bookings} bookings synced in ${r.syncS.toFixed(1)} s` +
          ` (${Object.entries(launcherEnv)
            .map(([k, v]) => `${k}=${v} `)
            .join(
              "",
            )}node ${nodeArgs.join(" ") || "without options"}): RSS ${mb(r.afterSync)} MB after the sync,` +
          ` ${mb(r.idle)} MB after ${idleS} s idle (samples every ${sampleS} s: median ${mb(median(r.samples))},` +
          ` ${mb(Math.min(...r.samples))}-${mb(Math.max(...r.samples))} MB); peak ${mb(r.peak)} MB`,
      );
    }
    if (runs.length > 1) {
      console.log(
        `median of ${runs.length} runs: RSS ${mb(median(runs.map((r) => r.idle)))} MB after ${idleS} s idle` +
          ` (runs ${runs.map((r) => mb(r.idle)).join(", ")}); peak ${mb(median(runs.map((r) => r.peak)))} MB`,
      );
    }
  } finally {
    simulator.kill("SIGTERM");
  }
}

await main();
