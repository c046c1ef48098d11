/**
 * Benchmark: what the sidecar holds once idle. Starts the simulator and `booking-sync run` (the
 * built CLI, or `--cli` another build) with a fresh database, waits for its first sync to finish,
 * lets it idle, and prints its resident memory then and its peak.
 *
 *   npm run bench:idle -- [--bookings 20000] [--idle-s 60] [--node-options=--max-semi-space-size=4]
 *
 * Prints the figures; asserts nothing (targets in docs/performance.md).
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
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

/** The node flags a CLI's `#!/usr/bin/env -S node ...` line starts it with. */
function launcherFlags(cli: string): string {
  const first = readFileSync(cli, "utf8").split("\n", 1)[0] ?? "";
  return /^#!.*\bnode\b(.*)$/.exec(first)?.[1]?.trim() ?? "";
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      bookings: { type: "string", default: "20000" },
      "idle-s": { type: "string", default: "60" },
      "node-options": { type: "string" },
      cli: { type: "string", default: BUILT_CLI },
    },
  });
  const { url, child: simulator } = await startSimulatorProcess(Number(values.bookings), 0);
  const dir = mkdtempSync(join(tmpdir(), "booking-sync-idle-"));
  const nodeArgs = (values["node-options"] ?? launcherFlags(values.cli)).split(" ").filter(Boolean);
  const daemon = spawn(process.execPath, [...nodeArgs, values.cli, "run"], {
    env: {
      ...process.env,
      BOOKING_API_BASE_URL: url,
      BOOKING_API_TOKEN: "sim-token",
      BOOKING_DB_PATH: join(dir, "bookings.db"),
      HTTP_PORT: "0",
      SYNC_SCHEDULE: "0 0 1 1 *",
      LOG_LEVEL: "info",
    },
    stdio: ["ignore", "ignore", "pipe"],
  });
  try {
    let log = "";
    daemon.stderr.on("data", (d) => (log += d));
    const started = performance.now();
    while (!/"msg":"sync finished"/.test(log)) {
      if (daemon.exitCode !== null) throw new Error(`the daemon exited: ${log.slice(-2000)}`);
      await sleep(100);
    }
    const synced = memoryOf(daemon.pid as number);
    const idleS = Number(values["idle-s"]);
    await sleep(idleS * 1000);
    const idle = memoryOf(daemon.pid as number);
    console.log(
      `${values.bookings} bookings synced in ${((performance.now() - started) / 1000 - idleS).toFixed(1)} s` +
        ` (node ${nodeArgs.join(" ") || "without options"}): RSS ${synced.rssMb.toFixed(0)} MB after the sync,` +
        ` ${idle.rssMb.toFixed(0)} MB after ${idleS} s idle; peak ${idle.peakMb.toFixed(0)} MB`,
    );
  } finally {
    daemon.kill("SIGTERM");
    await once(daemon, "close");
    simulator.kill("SIGTERM");
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
