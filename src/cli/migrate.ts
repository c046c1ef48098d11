/** `booking-sync migrate`: create or upgrade the database schema (every command also does this on open). */
import type { Command } from "commander";
import { runAsWriter, withExitCode } from "./command.js";
import { EXIT } from "./output.js";

export function registerMigrate(program: Command): void {
  program
    .command("migrate")
    .description("create or upgrade the database schema, then exit")
    .action(withExitCode(migrateAction));
}

function migrateAction(flags: Record<string, unknown>): Promise<number> {
  // Opening the mirror as its writer migrates it.
  return runAsWriter(
    flags,
    {},
    ({ app }) => {
      process.stdout.write(`database ${app.store.location} is up to date\n`);
      return EXIT.ok;
    },
    { lease: "none" },
  );
}
