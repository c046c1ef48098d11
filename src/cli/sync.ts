/** `booking-sync sync`: one incremental sync, then exit. */
import type { Command } from "commander";
import { openApp } from "../app.js";
import { loadConfig } from "../config/config.js";
import { takeWriterLease } from "../store/writer-lease.js";
import { runSync } from "../sync/run-sync.js";
import { EXIT, reportError, syncSummary } from "./output.js";
import { withApiOptions } from "./program.js";
import { abortOnSignals } from "./signals.js";

export function registerSync(program: Command): void {
  withApiOptions(program.command("sync"))
    .description("run one incremental sync of the booking feed, then exit")
    .option("--details", "then fill in full details of new bookings (SYNC_DETAILS)")
    .option(
      "--details-max-pages <n>",
      "list-bookings pages one details pass may read (SYNC_DETAILS_MAX_PAGES)",
    )
    .action(async function (this: Command) {
      (this as Command & { exitCode?: number }).exitCode = await syncAction(this.optsWithGlobals());
    });
}

async function syncAction(flags: Record<string, unknown>): Promise<number> {
  let app: ReturnType<typeof openApp> | undefined;
  const signals = abortOnSignals();
  try {
    const config = loadConfig({ flags, env: process.env });
    app = openApp(config);
    const lease = takeWriterLease(app.store, { clock: app.clock, logger: app.logger, onLost: signals.abort });
    if (!lease.acquired) throw new Error(lease.message);
    const report = await runSync(
      { ...app, signal: signals.signal },
      {
        bookingType: config.bookingType,
        pageSize: config.pageSize,
        lookbackSeconds: config.lookbackSeconds,
        details: config.details,
        detailsMaxPages: config.detailsMaxPages,
      },
    ).finally(() => lease.release());
    process.stdout.write(`${syncSummary(report)}\n`);
    if (report.status !== "success") {
      process.stderr.write(`booking-sync: ${report.error?.message ?? report.status}\n`);
      return EXIT.failed;
    }
    return EXIT.ok;
  } catch (err) {
    return reportError(err);
  } finally {
    app?.close();
    signals.dispose();
  }
}
