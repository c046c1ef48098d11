/** `booking-sync reconcile`: re-read a window of list-bookings for changes and missing bookings. */
import type { Command } from "commander";
import { ConfigError } from "../errors.js";
import { withheldText } from "../sync/list/missing-share.js";
import { type ReconcileReport, runReconcile } from "../sync/list/reconcile.js";
import { runAsWriter, withExitCode } from "./command.js";
import { refuseBookingType, withApiOptions } from "./options.js";
import { EXIT, reconcileSummary } from "./output.js";
import { progressView } from "./progress.js";
import { UNIT_SECONDS } from "./status.js";

export function registerReconcile(program: Command): void {
  withApiOptions(program.command("reconcile"))
    .description(
      "re-read list-bookings for bookings created in a window (or all) to pick up changes the feed " +
        "does not show, and mark bookings the source no longer serves (missing_since; never deleted)",
    )
    .option(
      "--since <when>",
      "window start: a duration back from now (7d, 24h, 90m) or an ISO 8601 time; default all",
    )
    .option(
      "--max-missing-share <percent>",
      "most bookings one pass marks missing, percent of those it judges; more are withheld and exit 1 (RECONCILE_MAX_MISSING_SHARE)",
    )
    .option(
      "--apply-missing",
      "mark every booking the source no longer serves, past the share too: after checking the source",
    )
    .action(withExitCode(reconcileAction));
}

/** The window's start as ISO 8601: `7d`, `24h`, `90m`, `30s` back from `now`, or an ISO 8601 time. */
export function parseSince(text: string, now: Date): string {
  const s = text.trim();
  const duration = /^(\d+)\s*([smhd])$/.exec(s);
  if (duration) {
    const ms = Number(duration[1]) * UNIT_SECONDS[duration[2] as keyof typeof UNIT_SECONDS] * 1000;
    return new Date(now.getTime() - ms).toISOString();
  }
  if (/^\d{4}-\d{2}-\d{2}/.test(s) && !Number.isNaN(Date.parse(s))) return new Date(s).toISOString();
  throw new ConfigError(
    `--since = ${JSON.stringify(text)} is not valid: expected a duration like 7d, 24h or 90m, or an ISO 8601 time`,
    { hint: "booking-sync reconcile --since 7d" },
  );
}

async function reconcileAction(flags: Record<string, unknown>): Promise<number> {
  let since: string | null = null;
  const check = () => {
    refuseBookingType(flags, "reconcile", "booking-sync reconcile --since 7d");
    if (flags.since !== undefined) since = parseSince(String(flags.since), new Date());
  };
  return runAsWriter(
    flags,
    { api: true },
    async ({ app, config, signal, exit }) => {
      const view = progressView("reconcile", app.logger, signal);
      const startedMs = app.clock.now().getTime();
      const report = await runReconcile(
        { ...app, signal },
        {
          since,
          pageSize: config.pageSize,
          bookingType: config.bookingType,
          maxMissingPercent: config.reconcileMaxMissingPercent,
          applyMissing: flags.applyMissing === true,
          onPage: (e) => {
            const elapsedSec = Math.max(0.001, (app.clock.now().getTime() - startedMs) / 1000);
            view.update({
              ...e,
              ratePerSec: e.bookings / elapsedSec,
              note: e.upTo ? `back to ${e.upTo}` : "",
            });
          },
        },
      ).finally(() => view.stop());
      process.stdout.write(`${reconcileSummary(report)}\n`);
      const code = exit(
        report,
        "nothing was marked missing; the next `booking-sync reconcile` reads its window again",
      );
      return code === EXIT.ok ? withheldExit(report) : code;
    },
    { check },
  );
}

/** Exit 1, saying what a person must decide, when the pass withheld its missing marks; else 0. */
function withheldExit(report: ReconcileReport): number {
  if (report.withheld === null) return EXIT.ok;
  process.stderr.write(
    `booking-sync: ${withheldText(report.withheld)}; every change read was saved.\n` +
      "If the source really stopped serving them, mark them; if it is the wrong source, fix BOOKING_API_BASE_URL or the token.\n" +
      "Try: booking-sync reconcile --apply-missing\n",
  );
  return EXIT.failed;
}
