/** `booking-sync rewrite-personal-data`: applies SYNC_PERSONAL_DATA to what the mirror already holds. */
import type { Command } from "commander";
import { systemClock } from "../app.js";
import { loadConfig, sqliteFile } from "../config/config.js";
import { ConfigError } from "../errors.js";
import { createLogger } from "../logger.js";
import { openStore, type Store } from "../store/index.js";
import { personalDataPolicy } from "../store/personal-data.js";
import { rewritePersonalData } from "../store/personal-rewrite.js";
import { takeWriterLease } from "../store/writer-lease.js";
import { EXIT, reportError } from "./output.js";

export function registerRewritePersonalData(program: Command): void {
  program
    .command("rewrite-personal-data")
    .description(
      "hash or drop the personal fields of every stored booking and reject (SYNC_PERSONAL_DATA), then exit",
    )
    .option("--personal-data <mode>", "hash or drop (SYNC_PERSONAL_DATA)")
    .action(async function (this: Command) {
      (this as Command & { exitCode?: number }).exitCode = await rewriteAction(this.optsWithGlobals());
    });
}

async function rewriteAction(flags: Record<string, unknown>): Promise<number> {
  let store: Store | undefined;
  try {
    const config = loadConfig({ flags, env: process.env });
    const mode = config.personalData;
    const personal = personalDataPolicy(mode, config.personalDataKey, { stored: true });
    if (!personal) {
      throw new ConfigError("SYNC_PERSONAL_DATA is keep: there is nothing to rewrite", {
        hint:
          "set SYNC_PERSONAL_DATA=hash or drop (or --personal-data); values already hashed or dropped " +
          "come back only from the source: `booking-sync backfill --restart`",
      });
    }
    const logger = createLogger({ level: config.logLevel });
    const path = sqliteFile(config, "rewrite-personal-data", "it rewrites SQLite mirrors only, for now");
    store = openStore(path, { logger });
    const lease = takeWriterLease(store, { clock: systemClock, logger });
    if (!lease.acquired) throw new Error(lease.message);
    try {
      const report = await rewritePersonalData(store.db, personal, {
        onBatch: (read) => logger.debug({ bookings: read }, "rewriting personal data"),
      });
      const other = config.personalDataKey === undefined ? report.hashed.keyed : report.hashed.plain;
      if (mode === "hash" && other > 0)
        logger.warn(
          { bookings: other },
          "bookings keep hashes made with another SYNC_PERSONAL_DATA_KEY setting; they change when the source serves them again",
        );
      if (!report.walEmptied)
        logger.warn("a reader kept the WAL busy; old values leave it at the next checkpoint");
      process.stdout.write(
        `rewrite-personal-data (${mode}): ${report.bookingsRewritten} of ${report.bookings} bookings rewritten, ` +
          `${report.rejectsRewritten} rejected records\n`,
      );
    } finally {
      lease.release();
    }
    return EXIT.ok;
  } catch (err) {
    return reportError(err);
  } finally {
    store?.close();
  }
}
