/** The commander program: global options, one file per command, exit codes 0/1/2. */
import { Command, CommanderError } from "commander";
import { describeEnvironment } from "../config/config.js";
import { PACKAGE_VERSION } from "../version.js";
import { registerAdoptSource } from "./adopt-source.js";
import { registerBackfill } from "./backfill.js";
import { registerEvents } from "./events.js";
import { registerLabels } from "./labels.js";
import { registerMigrate } from "./migrate.js";
import { EXIT, reportError } from "./output.js";
import { registerReconcile } from "./reconcile.js";
import { registerRewritePersonalData } from "./rewrite-personal-data.js";
import { registerRun } from "./run.js";
import { registerSimulate } from "./simulate.js";
import { registerStatus } from "./status.js";
import { registerSync } from "./sync.js";

/** Commander's ends after printing what was asked for, not a usage error. */
const ASKED = new Set(["commander.helpDisplayed", "commander.version", "commander.help"]);

export function buildProgram(): Command {
  const program = new Command("booking-sync")
    .description("Mirror partner bookings into a SQLite database you own, incrementally and without loss.")
    .version(PACKAGE_VERSION, "-V, --version", "print the version and exit")
    .option("--db <path>", "SQLite database file (BOOKING_DB_PATH)")
    .option("--log-level <level>", "trace, debug, info, warn, error, fatal or silent (LOG_LEVEL)")
    .showSuggestionAfterError()
    .showHelpAfterError("(add --help for usage)")
    .exitOverride()
    .addHelpText(
      "after",
      `\n${describeEnvironment()}\n\nExit codes: 0 ok, 1 the work failed, 2 bad usage or config.\n` +
        "Try: booking-sync simulate   (serves the bundled simulator and prints the command that syncs it)",
    );
  registerSync(program);
  registerRun(program);
  registerBackfill(program);
  registerReconcile(program);
  registerAdoptSource(program);
  registerMigrate(program);
  registerRewritePersonalData(program);
  registerLabels(program);
  registerSimulate(program);
  registerStatus(program);
  registerEvents(program);
  return program;
}

/** Runs the CLI; returns the exit code instead of exiting, so tests and the entry point share it. */
export async function main(argv: string[]): Promise<number> {
  const program = buildProgram();
  let code: number = EXIT.ok;
  // Subcommands inherit the program's exitOverride; its hook runs after any of their actions.
  program.hook("postAction", (_this, action) => {
    code = (action as Command & { exitCode?: number }).exitCode ?? EXIT.ok;
  });
  try {
    await program.parseAsync(argv);
  } catch (err) {
    if (err instanceof CommanderError) return ASKED.has(err.code) ? EXIT.ok : EXIT.usage;
    return reportError(err);
  }
  return code;
}
