/**
 * The simulator in a child process for benchmarks, so its CPU does not share the measured process's
 * event loop. `startSimulatorProcess` resolves with its URL once it listens, and with controls that
 * talk to it over its stdin: its request counters, and a warm-up of its record cache.
 *
 * This file is also the child: `node simulator-process.js --serve --bookings N --latency-ms M`
 * serves the bundled simulator (as `booking-sync simulate` does, same defaults) and answers one JSON
 * line on stdout per command line on stdin (`stats`, `reset`, `warm`). It exits when its stdin
 * closes, so a benchmark that dies leaves no simulator behind.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import type { SimulatorStats } from "../dist/simulator/index.js";

const SELF = fileURLToPath(import.meta.url);

export interface SimulatorProcess {
  /** Base URL, e.g. `http://127.0.0.1:PORT/api/v2`. */
  url: string;
  child: ChildProcess;
  /** The simulator's request counters since it started or since the last `resetStats`. */
  stats(): Promise<SimulatorStats>;
  resetStats(): Promise<void>;
  /**
   * Serializes bookings into the simulator's record cache, newest first, both views, until the
   * cache is full; resolves with how many. Measured runs then meet the same warm simulator
   * whatever ran before them (a real API's work is not on this machine).
   */
  warm(): Promise<number>;
}

export function startSimulatorProcess(bookings: number, latencyMs: number): Promise<SimulatorProcess> {
  const args = [SELF, "--serve", "--bookings", String(bookings), "--latency-ms", String(latencyMs)];
  const child = spawn(process.execPath, args, { stdio: ["pipe", "pipe", "inherit"] });
  const waiting: Array<{ resolve: (line: string) => void; reject: (err: Error) => void }> = [];
  const ask = (command: string) =>
    new Promise<string>((resolve, reject) => {
      if (child.exitCode !== null || child.signalCode !== null)
        return reject(new Error("the simulator has exited"));
      waiting.push({ resolve, reject });
      child.stdin?.write(`${command}\n`);
    });
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
    lines.once("line", (first) => {
      const url = /listening at (\S+)/.exec(first)?.[1];
      if (!url) return reject(new Error(`the simulator said ${JSON.stringify(first)}`));
      lines.on("line", (line) => waiting.shift()?.resolve(line));
      resolve({
        url,
        child,
        stats: async () => JSON.parse(await ask("stats")) as SimulatorStats,
        resetStats: async () => void (await ask("reset")),
        warm: async () => (JSON.parse(await ask("warm")) as { warmed: number }).warmed,
      });
    });
    child.on("exit", (code) => {
      const err = new Error(`simulator exited with ${code}`);
      reject(err);
      for (const asked of waiting.splice(0)) asked.reject(err);
    });
  });
}

/** The child: serves until its stdin closes or a signal comes. */
async function serve(): Promise<void> {
  const { values } = parseArgs({
    options: {
      serve: { type: "boolean" },
      bookings: { type: "string", default: "5000" },
      "latency-ms": { type: "string", default: "0" },
    },
  });
  // Loaded here, not at the top: a benchmark that only starts the child need not load the simulator.
  const { startSimulator } = await import("../dist/simulator/index.js");
  const { DEFAULT_RECORD_CACHE_BYTES } = await import("../dist/simulator/record-cache.js");
  const sim = await startSimulator({
    bookings: Number(values.bookings),
    latencyMs: Number(values["latency-ms"]),
  });
  const warm = (): number => {
    let bytes = 0;
    let i = sim.dataset.size - 1;
    for (; i >= 0 && bytes < DEFAULT_RECORD_CACHE_BYTES; i--) {
      bytes += sim.dataset.json("full", i).length + sim.dataset.json("summary", i).length;
    }
    return sim.dataset.size - 1 - i;
  };
  const commands: Record<string, () => unknown> = {
    stats: () => sim.stats,
    reset: () => sim.resetStats(),
    warm: () => ({ warmed: warm() }),
  };
  process.stdout.write(`simulator listening at ${sim.url}\n`);
  const stdin = createInterface({ input: process.stdin });
  stdin.on("line", (line) => {
    const command = commands[line.trim()];
    process.stdout.write(`${JSON.stringify(command ? (command() ?? {}) : { error: line })}\n`);
  });
  await new Promise<void>((resolve) => {
    stdin.once("close", resolve);
    process.once("SIGINT", resolve);
    process.once("SIGTERM", resolve);
  });
  await sim.close();
  process.exit(0);
}

if (process.argv[1] === SELF) await serve();
