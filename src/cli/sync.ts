/** `booking-sync sync`: one incremental sync, then exit. */
import type { Command } from "commander";
import { runSync } from "../sync/run-sync.js";
import { runAsWriter, withExitCode } from "./command.js";
import { withApiOptions } from "./options.js";
import { syncSummary } from "./output.js";
import { progressView } from "./progress.js";

export function registerSync(program: Command): void {
  withApiOptions(program.command("sync"))
    .description("run one incremental sync of the booking feed, then exit")
    .option("--details", "then fill in full details of new bookings: the default (SYNC_DETAILS)")
    .option("--no-details", "skip the details pass: summaries only, no list-bookings pages")
    .option(
      "--details-max-pages <n>",
      "list-bookings pages one details pass may read (SYNC_DETAILS_MAX_PAGES)",
    )
    .option("--concurrency <n>", "HTTP requests in flight at once, 1-32 (SYNC_CONCURRENCY)")
    .action(withExitCode(syncAction));
}

function syncAction(flags: Record<string, unknown>): Promise<number> {
  return runAsWriter(flags, { api: true }, async ({ app, config, signal, exit }) => {
    // Drawn only while a fill runs: an everyday sync reports nothing until its summary line.
    const view = progressView({ label: "fill", logger: app.logger });
    signal.addEventListener("abort", () => view.stop(), { once: true });
    const report = await runSync(
      { ...app, signal },
      {
        bookingType: config.bookingType,
        pageSize: config.pageSize,
        lookbackSeconds: config.lookbackSeconds,
        details: config.details,
        detailsMaxPages: config.detailsMaxPages,
        concurrency: config.concurrency,
        onProgress: (e) => view.update(e),
      },
    ).finally(() => view.stop());
    process.stdout.write(`${syncSummary(report)}\n`);
    return exit(report, "the next `booking-sync sync` resumes where this one left off");
  });
}
