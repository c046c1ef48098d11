import type { Command } from "commander";

/** Options every API command takes; each overrides its environment variable. */
export function withApiOptions(cmd: Command): Command {
  return cmd
    .option("--base-url <url>", "partner API base URL including /api/v2 (BOOKING_API_BASE_URL)")
    .option("--booking-type <type>", "only this booking type: IN, LC or ALL (SYNC_BOOKING_TYPE)")
    .option("--page-size <n>", "bookings per request, 1-100 (SYNC_PAGE_SIZE)")
    .option("--lookback-seconds <s>", "re-read margin below the checkpoint (SYNC_LOOKBACK_SECONDS)")
    .option("--timeout-ms <ms>", "timeout of one HTTP attempt (SYNC_TIMEOUT_MS)")
    .option("--max-retries <n>", "retries of a failed request (SYNC_MAX_RETRIES)")
    .option("--max-response-mb <mb>", "largest response body read, in MB (SYNC_MAX_RESPONSE_MB)")
    .option("--personal-data <mode>", "keep, hash or drop personal fields (SYNC_PERSONAL_DATA)");
}
