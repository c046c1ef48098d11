/** Around every command that writes the mirror: config, app, writer lease, signals and exit codes. */
import { type App, openApp } from "../app.js";
import { type Config, loadConfig } from "../config/config.js";
import { exitFor, type Outcome, reportError } from "./output.js";
import { abortOnSignals } from "./signals.js";

export interface WriterContext {
  app: App;
  config: Config;
  /** Aborted by the first SIGINT/SIGTERM, or when the writer lease is lost. */
  signal: AbortSignal;
  /** The exit code of the run's outcome, after printing why it did not succeed (`resume` after a signal). */
  exit(outcome: Outcome, resume: string): number;
}

/**
 * Runs `work` as the single writer; returns its exit code: 2 for a usage or config error, 1 for any
 * other failure, 130 (SIGINT) or 143 (SIGTERM) after a signal. `check` validates flags before
 * anything opens.
 */
export async function runAsWriter(
  flags: Record<string, unknown>,
  work: (ctx: WriterContext) => Promise<number>,
  check?: () => void,
): Promise<number> {
  let app: App | undefined;
  const signals = abortOnSignals();
  try {
    check?.();
    const config = loadConfig({ flags, env: process.env });
    app = await openApp(config);
    const lease = await app.store.takeWriterLease({
      clock: app.clock,
      logger: app.logger,
      onLost: () => signals.abort("lost the writer lease to another process"),
    });
    if (!lease.acquired) throw new Error(lease.message);
    const exit = (outcome: Outcome, resume: string) =>
      exitFor(outcome, { by: signals.received(), reason: signals.signal.reason, resume });
    try {
      return await work({ app, config, signal: signals.signal, exit });
    } finally {
      await lease.release();
    }
  } catch (err) {
    return reportError(err);
  } finally {
    await app?.close();
    signals.dispose();
  }
}
