/** `booking-sync run`: the sidecar. Syncs on a schedule until SIGTERM; serves health, metrics and a trigger. */
import type { Command } from "commander";
import { startDaemon } from "../daemon/run.js";
import { runAsWriter, withExitCode } from "./command.js";
import { withApiOptions } from "./options.js";
import { EXIT } from "./output.js";

export function registerRun(program: Command): void {
  withApiOptions(program.command("run"))
    .description(
      "sync on a schedule until SIGTERM (a first sync at once), serving a status page at GET /, " +
        "GET /healthz, /readyz, /metrics and POST /sync; waits while another process holds the database",
    )
    .option("--schedule <cron>", "when to sync, e.g. '*/5 * * * *' (SYNC_SCHEDULE)")
    .option(
      "--reconcile-schedule <cron>",
      "when to reconcile, e.g. '0 3 * * *'; off when unset (RECONCILE_SCHEDULE)",
    )
    .option("--http-port <port>", "port of the HTTP endpoint; 0 disables it (HTTP_PORT)")
    .option("--http-host <host>", "address the HTTP endpoint binds (HTTP_HOST)")
    .option("--details", "after each sync, fill in full details of new bookings: the default (SYNC_DETAILS)")
    .option("--no-details", "skip the details pass: summaries only, no list-bookings pages")
    .option(
      "--details-max-pages <n>",
      "list-bookings pages one details pass may read (SYNC_DETAILS_MAX_PAGES)",
    )
    .option("--concurrency <n>", "HTTP requests in flight at once, 1-32 (SYNC_CONCURRENCY)")
    .action(withExitCode(runAction));
}

/** Runs the daemon; returns only when it stopped by itself or could not start (a signal exits itself). */
function runAction(flags: Record<string, unknown>): Promise<number> {
  return runAsWriter(
    flags,
    { api: true, metrics: true },
    async ({ app, config }) => {
      await (await startDaemon(app, config)).finished;
      return EXIT.ok;
    },
    { lease: "daemon" },
  );
}
