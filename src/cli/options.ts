import type { Command } from "commander";
import { ConfigError } from "../errors.js";

/** Options every API command takes; each overrides its environment variable. */
export function withApiOptions(cmd: Command): Command {
  return cmd
    .option("--base-url <url>", "partner API base URL including /api/v2 (BOOKING_API_BASE_URL)")
    .option("--booking-type <type>", "only this booking type: IN, LC or ALL (SYNC_BOOKING_TYPE)")
    .option("--page-size <n>", "bookings per request, 3-100 (SYNC_PAGE_SIZE)")
    .option("--lookback-seconds <s>", "re-read margin below the checkpoint (SYNC_LOOKBACK_SECONDS)")
    .option("--timeout-ms <ms>", "timeout of one HTTP attempt (SYNC_TIMEOUT_MS)")
    .option("--max-retries <n>", "retries of a failed request (SYNC_MAX_RETRIES)")
    .option("--max-response-mb <mb>", "largest response body read, in MB (SYNC_MAX_RESPONSE_MB)")
    .option("--personal-data <mode>", "keep, hash or drop personal fields (SYNC_PERSONAL_DATA)");
}

/** The options of a feed sync, `sync`'s and the daemon's: `fill` says when the details pass runs. */
export function withSyncOptions(cmd: Command, fill: string): Command {
  return withConcurrency(
    cmd
      .option("--details", `${fill} fill in full details of new bookings: the default (SYNC_DETAILS)`)
      .option("--no-details", "skip the details pass: summaries only, no list-bookings pages")
      .option(
        "--details-max-pages <n>",
        "list-bookings pages one details pass may read (SYNC_DETAILS_MAX_PAGES)",
      ),
  );
}

export function withConcurrency(cmd: Command): Command {
  return cmd.option("--concurrency <n>", "HTTP requests in flight at once, 1-32 (SYNC_CONCURRENCY)");
}

/** list-bookings has no type filter: a command that reads it refuses `--booking-type` other than ALL. */
// SYNC_BOOKING_TYPE still applies: a typed mirror takes no other type.
export function refuseBookingType(flags: Record<string, unknown>, command: string, hint: string): void {
  if (flags.bookingType !== undefined && String(flags.bookingType).toUpperCase() !== "ALL") {
    throw new ConfigError(`${command} cannot filter by booking type: list-bookings has no such filter`, {
      hint,
    });
  }
}
