/**
 * The processes the events benchmark (bench/events-bench.ts) measures: the built CLI's `sync` as a
 * fill, and `booking-sync run` with a webhook, as a sidecar runs them (the launcher's node flags,
 * every setting default but the ones named here), against a simulator and a mirror given by the caller.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { closeSync, openSync, readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { DEFAULT_CONCURRENCY } from "../dist/config/settings.js";
import { clockTicks, daemonEnv, launcherFlags } from "./cold-start.js";

const CLI = new URL("../dist/cli.js", import.meta.url).pathname;

/** The signing secret of every run: fixed, so runs are alike (32 bytes of 7s). */
export const SECRET = `whsec_${Buffer.alloc(32, 7).toString("base64")}`;

/** A mirror: a SQLite file's path or a postgres:// URL (BOOKING_DB_PATH takes both). */
export type Mirror = string;

function env(apiUrl: string, mirror: Mirror, extra: Record<string, string>): NodeJS.ProcessEnv {
  return { ...daemonEnv(apiUrl, mirror, DEFAULT_CONCURRENCY), ...extra };
}

/**
 * CPU seconds (user and system) of this process's children that have exited and been waited for:
 * a child's own CPU is read from the difference across its run, as it can no longer be read itself.
 */
function reapedChildrenCpuS(): number {
  const stat = readFileSync("/proc/self/stat", "utf8");
  // Fields after the command's closing parenthesis; cutime and cstime are the 16th and 17th of the line.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[13]) + Number(fields[14])) / clockTicks();
}

/** A fill's wall time and its process's CPU time (user and system), ms. */
export interface FillTime {
  ms: number;
  cpuMs: number;
}

/**
 * One cold `booking-sync sync --no-details` (the feed walk, where the events are written) into
 * `mirror`; resolves with its wall and CPU time. `events: false` sets EVENTS_RETENTION_DAYS=0.
 */
export async function timeFill(
  apiUrl: string,
  mirror: Mirror,
  events: boolean,
  logPath: string,
  details = false,
): Promise<FillTime> {
  const extra: Record<string, string> = events ? {} : { EVENTS_RETENTION_DAYS: "0" };
  const log = openSync(logPath, "w");
  const cpuBefore = reapedChildrenCpuS();
  const started = performance.now();
  const child = spawn(
    process.execPath,
    [...launcherFlags(), CLI, "sync", ...(details ? [] : ["--no-details"])],
    {
      env: env(apiUrl, mirror, extra),
      stdio: ["ignore", log, log],
    },
  );
  closeSync(log);
  const [code] = (await once(child, "exit")) as [number | null];
  const ms = performance.now() - started;
  if (code !== 0) throw new Error(`sync exited ${code}:\n${readFileSync(logPath, "utf8").slice(-3000)}`);
  return { ms, cpuMs: (reapedChildrenCpuS() - cpuBefore) * 1000 };
}

/**
 * `booking-sync run` posting events to `webhookUrl` (no webhook when undefined); `extra` adds
 * settings (e.g. SYNC_SCHEDULE).
 */
export function startRun(
  apiUrl: string,
  mirror: Mirror,
  webhookUrl: string | undefined,
  logPath: string,
  extra: Record<string, string> = {},
): ChildProcess {
  const log = openSync(logPath, "w");
  const webhook: Record<string, string> =
    webhookUrl === undefined ? {} : { EVENTS_WEBHOOK_URL: webhookUrl, EVENTS_WEBHOOK_SECRET: SECRET };
  const daemon = spawn(process.execPath, [...launcherFlags(), CLI, "run"], {
    env: env(apiUrl, mirror, { ...webhook, ...extra }),
    stdio: ["ignore", log, log],
  });
  closeSync(log);
  const kill = () => daemon.kill("SIGKILL");
  process.once("exit", kill);
  daemon.once("exit", () => process.off("exit", kill));
  return daemon;
}

/** RSS of a live process now, MB (VmRSS). */
export function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? Number.NaN) / 1024;
}

/**
 * Polls `done` every `everyMs` until it holds; throws when the daemon exits first (with its log's
 * tail) or after `timeoutMs`. `tick` runs on each poll (sampling).
 */
export async function waitFor(
  daemon: ChildProcess,
  logPath: string,
  done: () => boolean,
  timeoutMs: number,
  what: string,
  tick: () => void = () => {},
  everyMs = 50,
): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!done()) {
    if (daemon.exitCode !== null || daemon.signalCode !== null) {
      const tail = readFileSync(logPath, "utf8").slice(-3000);
      throw new Error(
        `booking-sync run exited (${daemon.exitCode ?? daemon.signalCode}) before ${what}:\n${tail}`,
      );
    }
    if (performance.now() > deadline)
      throw new Error(`no ${what} after ${timeoutMs / 1000} s (log: ${logPath})`);
    tick();
    await sleep(everyMs);
  }
}

/** The daemon's first `sync finished` line in its log: when it was written (epoch ms) and the run's ms. */
export function firstSync(logPath: string): { endAt: number; ms: number } | undefined {
  const line = readFileSync(logPath, "utf8")
    .split("\n")
    .find((l) => l.includes('"msg":"sync finished"'));
  if (line === undefined) return undefined;
  const { time, durationMs } = JSON.parse(line) as { time: number; durationMs: number };
  return { endAt: time, ms: durationMs };
}
