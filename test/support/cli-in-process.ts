/**
 * The CLI's own `main` (src/cli/program.ts, what dist/cli.js runs) called in this process, with the
 * environment it would get and its output collected: the command line, the config, the writer lease,
 * the sync core, the real client over real HTTP and a real database, exit codes and messages, all as
 * a subprocess runs them, less the ~1 s a Node process takes to start. For what only a process shows
 * (its memory flags, signals, a second writer), run the build with `runCli` of harness.ts instead.
 */
import { main } from "../../src/cli/program.js";
import type { CliResult } from "./harness.js";

let busy = false;

/**
 * Runs `booking-sync <args>` with `env` as its whole environment and resolves with its exit code and
 * output, as `runCli` does. One at a time: it lends the process its environment and output streams.
 */
export async function runCliInProcess(args: string[], env: NodeJS.ProcessEnv): Promise<CliResult> {
  if (busy) throw new Error("runCliInProcess: one command at a time (it borrows process.env and stdio)");
  busy = true;
  const saved = { ...process.env };
  const writes = { out: process.stdout.write, err: process.stderr.write };
  let stdout = "";
  let stderr = "";
  const collect =
    (append: (text: string) => void) =>
    (chunk: string | Uint8Array, ...rest: unknown[]): boolean => {
      append(typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8"));
      const done = rest.find((r) => typeof r === "function") as (() => void) | undefined;
      done?.();
      return true;
    };
  replaceEnv(env);
  process.stdout.write = collect((t) => (stdout += t)) as typeof process.stdout.write;
  process.stderr.write = collect((t) => (stderr += t)) as typeof process.stderr.write;
  try {
    const code = await main(["node", "booking-sync", ...args]);
    return { code, signal: null, stdout, stderr };
  } finally {
    process.stdout.write = writes.out;
    process.stderr.write = writes.err;
    replaceEnv(saved);
    busy = false;
  }
}

/**
 * Makes `process.env` exactly `env`, in place (so a TZ change reaches the time zone of `Date`), but
 * for vitest's own VITEST* variables, which its worker may read meanwhile and the CLI never does.
 */
function replaceEnv(env: NodeJS.ProcessEnv): void {
  for (const key of Object.keys(process.env)) {
    if (!(key in env) && !key.startsWith("VITEST")) delete process.env[key];
  }
  for (const [key, value] of Object.entries(env)) {
    if (value === undefined) delete process.env[key];
    else if (process.env[key] !== value) process.env[key] = value;
  }
}
