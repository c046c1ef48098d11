/** `booking-sync run`: the sidecar. Syncs on a schedule until SIGTERM; serves health, metrics and a trigger. */
import type { Command } from "commander";
import { startDaemon } from "../daemon/run.js";
import { runAsWriter, withExitCode } from "./command.js";
import { withApiOptions, withSyncOptions } from "./options.js";
import { EXIT } from "./output.js";

export function registerRun(program: Command): void {
  withSyncOptions(withApiOptions(program.command("run")), "after each sync,")
    .description(
      "sync on a schedule until SIGTERM (a first sync at once), serving a status page at GET /, " +
        "GET /healthz, /readyz, /metrics, /events and POST /sync; waits while another process holds the database",
    )
    .option("--schedule <cron>", "when to sync, e.g. '*/5 * * * *' (SYNC_SCHEDULE)")
    .option(
      "--reconcile-schedule <cron>",
      "when to reconcile, e.g. '0 3 * * *'; off when unset (RECONCILE_SCHEDULE)",
    )
    .option("--http-port <port>", "port of the HTTP endpoint; 0 disables it (HTTP_PORT)")
    .option("--http-host <host>", "address the HTTP endpoint binds (HTTP_HOST)")
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
