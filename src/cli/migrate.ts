/** `booking-sync migrate`: create or upgrade the database schema (every command also does this on open). */
import type { Command } from "commander";
import { loadConfig } from "../config/config.js";
import { createLogger } from "../logger.js";
import { openMirror } from "../store/index.js";
import { EXIT, reportError } from "./output.js";

export function registerMigrate(program: Command): void {
  program
    .command("migrate")
    .description("create or upgrade the database schema, then exit")
    .action(function (this: Command) {
      return migrateAction(this.optsWithGlobals()).then((code) => {
        (this as Command & { exitCode?: number }).exitCode = code;
      });
    });
}

async function migrateAction(flags: Record<string, unknown>): Promise<number> {
  try {
    const config = loadConfig({ flags, env: process.env });
    const store = await openMirror(config.database, {
      logger: createLogger({ level: config.logLevel }),
      mode: Number.parseInt(config.dbMode, 8),
    });
    const where = store.location;
    await store.close();
    process.stdout.write(`database ${where} is up to date\n`);
    return EXIT.ok;
  } catch (err) {
    return reportError(err);
  }
}
