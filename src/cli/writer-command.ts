/**
 * What every command that writes the mirror does around its work: config, the app, the writer
 * lease (one writer per database), signals, and errors turned into exit codes.
 */
import { type App, openApp } from "../app.js";
import { type Config, loadConfig } from "../config/config.js";
import { takeWriterLease } from "../store/writer-lease.js";
import { reportError } from "./output.js";
import { abortOnSignals } from "./signals.js";

export interface WriterContext {
  app: App;
  config: Config;
  /** Aborted by the first SIGINT/SIGTERM, or when the writer lease is lost. */
  signal: AbortSignal;
}

/**
 * Runs `work` as the database's single writer and returns its exit code; a usage or config error
 * gives 2, any other failure 1. `check` validates flags before anything is opened.
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
    app = openApp(config);
    const lease = takeWriterLease(app.store, { clock: app.clock, logger: app.logger, onLost: signals.abort });
    if (!lease.acquired) throw new Error(lease.message);
    try {
      return await work({ app, config, signal: signals.signal });
    } finally {
      lease.release();
    }
  } catch (err) {
    return reportError(err);
  } finally {
    app?.close();
    signals.dispose();
  }
}
