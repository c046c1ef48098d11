/** `booking-sync backfill`: every booking, in full, through list-bookings; resumable. */
import type { Command } from "commander";
import { ConfigError } from "../errors.js";
import { runBackfill } from "../sync/backfill/backfill.js";
import { runAsWriter, withExitCode } from "./command.js";
import { refuseBookingType, withApiOptions, withConcurrency } from "./options.js";
import { backfillSummary } from "./output.js";
import { progressView } from "./progress.js";

export function registerBackfill(program: Command): void {
  withConcurrency(withApiOptions(program.command("backfill")))
    .description(
      "load every booking with full details through list-bookings, pages fetched concurrently; " +
        "resumable after an interruption, correct while new bookings arrive",
    )
    .option(
      "--source-platform <name>",
      "only bookings of this source platform (feed checkpoints are then left alone)",
    )
    .option("--resume", "continue the unfinished backfill (the default when there is one)")
    .option("--restart", "discard the unfinished backfill's progress and start over")
    .addHelpText(
      "after",
      "\nAt the end of an unfiltered backfill the feed checkpoints move to its start, so the next `sync`\n" +
        "covers only what is newer. Progress commits with every page: a kill loses nothing.",
    )
    .action(withExitCode(backfillAction));
}

function checkFlags(flags: Record<string, unknown>): void {
  if (flags.resume && flags.restart) {
    throw new ConfigError("--resume and --restart cannot be used together", {
      hint: "booking-sync backfill --restart   (or leave both out to resume when there is something to resume)",
    });
  }
  refuseBookingType(flags, "backfill", "booking-sync backfill   (or --source-platform web)");
  if (flags.sourcePlatform !== undefined && String(flags.sourcePlatform).trim() === "") {
    throw new ConfigError('--source-platform = "" is not valid: expected a platform name such as web', {
      hint: "booking-sync backfill --source-platform web",
    });
  }
}

async function backfillAction(flags: Record<string, unknown>): Promise<number> {
  return runAsWriter(
    flags,
    { api: true },
    async ({ app, config, signal, exit }) => {
      const view = progressView("backfill", app.logger, signal);
      const report = await runBackfill(
        { ...app, signal },
        {
          sourcePlatform: (flags.sourcePlatform as string | undefined)?.trim(),
          concurrency: config.concurrency,
          pageSize: config.pageSize,
          mode: flags.restart ? "restart" : "resume",
          bookingType: config.bookingType,
          onProgress: (e) => view.update(e),
        },
      ).finally(() => view.stop());
      process.stdout.write(`${backfillSummary(report)}\n`);
      return exit(report, "`booking-sync backfill` resumes where it left off");
    },
    { check: () => checkFlags(flags) },
  );
}
