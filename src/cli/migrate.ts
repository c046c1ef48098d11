/** `booking-sync migrate`: create or upgrade the database schema (every command also does this on open). */
import type { Command } from "commander";
import { loadConfig } from "../config/config.js";
import { createLogger } from "../logger.js";
import { openStore } from "../store/index.js";
import { EXIT, reportError } from "./output.js";

export function registerMigrate(program: Command): void {
  program
    .command("migrate")
    .description("create or upgrade the database schema, then exit")
    .action(function (this: Command) {
      (this as Command & { exitCode?: number }).exitCode = migrateAction(this.optsWithGlobals());
    });
}

function migrateAction(flags: Record<string, unknown>): number {
  try {
    const config = loadConfig({ flags, env: process.env });
    const store = openStore(config.dbPath, {
      logger: createLogger({ level: config.logLevel }),
      mode: Number.parseInt(config.dbMode, 8),
    });
    store.close();
    process.stdout.write(`database ${config.dbPath} is up to date\n`);
    return EXIT.ok;
  } catch (err) {
    return reportError(err);
  }
}
