/**
 * Around a command that writes the mirror but never calls the API: config, the store, the writer
 * lease and exit codes. `runAsWriter` would also demand the API settings, which such a command has no use for.
 */
import { systemClock } from "../app.js";
import { type Config, loadConfig, sqliteFile } from "../config/config.js";
import { createLogger } from "../logger.js";
import { openStore, type Store } from "../store/index.js";
import { takeWriterLease } from "../store/writer-lease.js";
import type { Logger } from "../sync/ports.js";
import { reportError } from "./output.js";

export interface StoreWriterContext {
  store: Store;
  config: Config;
  logger: Logger;
}

/**
 * Runs `work` as the single writer; returns its exit code: 2 for a usage or config error (also one
 * `check` throws before anything opens), 1 for any other failure, including another writer holding
 * the database. Meant for short work: no signal handling, and the lease is released when it returns.
 */
export async function runAsStoreWriter(
  command: string,
  flags: Record<string, unknown>,
  work: (ctx: StoreWriterContext) => number | Promise<number>,
  check?: () => void,
): Promise<number> {
  let store: Store | undefined;
  try {
    check?.();
    const config = loadConfig({ flags, env: process.env });
    const logger = createLogger({ level: config.logLevel });
    const path = sqliteFile(config, command, "run it against the SQLite mirror, or write the table with SQL");
    store = openStore(path, { logger, mode: Number.parseInt(config.dbMode, 8) });
    const lease = takeWriterLease(store, { clock: systemClock, logger });
    if (!lease.acquired) throw new Error(lease.message);
    try {
      return await work({ store, config, logger });
    } finally {
      lease.release();
    }
  } catch (err) {
    return reportError(err);
  } finally {
    store?.close();
  }
}
