/**
 * The simulator in a child process for benchmarks, so its CPU does not share the measured process's
 * event loop. Resolves with its URL once it prints that it listens.
 */
import { type ChildProcess, spawn } from "node:child_process";

/** The built CLI: `npm run bench` builds first. */
const CLI = new URL("../dist/cli.js", import.meta.url).pathname;

export function startSimulatorProcess(
  bookings: number,
  latencyMs: number,
): Promise<{ url: string; child: ChildProcess }> {
  const args = [
    CLI,
    "simulate",
    "--port",
    "0",
    "--bookings",
    String(bookings),
    "--latency-ms",
    String(latencyMs),
  ];
  const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "inherit"] });
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout?.on("data", (d) => {
      out += d;
      const m = /listening at (\S+)/.exec(out);
      if (m?.[1]) resolve({ url: m[1], child });
    });
    child.on("exit", (code) => reject(new Error(`simulator exited with ${code}`)));
  });
}
