/** `booking-sync sync`: one incremental sync, then exit. */
import type { Command } from "commander";
import { syncSettings } from "../config/config.js";
import { applyRetention } from "../events/retention.js";
import { runSync } from "../sync/run-sync.js";
import { runAsWriter, withExitCode } from "./command.js";
import { withApiOptions, withSyncOptions } from "./options.js";
import { syncSummary } from "./output.js";
import { progressView } from "./progress.js";

export function registerSync(program: Command): void {
  withSyncOptions(withApiOptions(program.command("sync")), "then")
    .description("run one incremental sync of the booking feed, then exit")
    .action(withExitCode(syncAction));
}

function syncAction(flags: Record<string, unknown>): Promise<number> {
  return runAsWriter(flags, { api: true }, async ({ app, config, signal, exit }) => {
    // Drawn only while a fill runs: an everyday sync reports nothing until its summary line.
    const view = progressView("fill", app.logger, signal);
    const report = await runSync(
      { ...app, signal },
      { ...syncSettings(config), onProgress: (e) => view.update(e) },
    ).finally(() => view.stop());
    process.stdout.write(`${syncSummary(report)}\n`);
    // A sync from cron keeps the stream's retention too (the daemon applies it after each run).
    const retention = { ...config, webhook: config.eventsWebhookUrl !== undefined };
    await applyRetention({ store: app.store.events, clock: app.clock, logger: app.logger }, retention);
    return exit(report, "the next `booking-sync sync` resumes where this one left off");
  });
}
