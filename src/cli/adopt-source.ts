/** `booking-sync adopt-source`: the mirror mirrors the configured source from now on, a person's decision. */
import type { Command } from "commander";
import { saveSource, sourceAddress } from "../sync/source.js";
import { readSourceRecord } from "../sync/source-guard.js";
import { runAsWriter, withExitCode } from "./command.js";
import { EXIT } from "./output.js";

export function registerAdoptSource(program: Command): void {
  program
    .command("adopt-source")
    .description(
      "mirror the configured source (BOOKING_API_BASE_URL and its token) from now on, after a command " +
        "refused it as another source; reads no API: the next command remembers the bookings it serves",
    )
    .option("--base-url <url>", "partner API base URL including /api/v2 (BOOKING_API_BASE_URL)")
    .action(withExitCode(adoptAction));
}

async function adoptAction(flags: Record<string, unknown>): Promise<number> {
  return runAsWriter(flags, { api: true }, async ({ app, config }) => {
    const before = await readSourceRecord(app.store);
    const address = sourceAddress(config.apiBaseUrl as string);
    const now = app.clock.now().toISOString();
    // No bookings yet: the next command's first page is remembered as this source's, unchecked.
    await saveSource(app.store, { baseUrl: address, bookings: [], since: now }, now);
    await app.store.flush();
    const held = await app.store.countBookings({ excludeMissing: true });
    const was = before ? `; it mirrored ${sourceAddress(before.baseUrl)} since ${before.since}` : "";
    process.stdout.write(
      `adopt-source: this mirror mirrors ${address} from now on${was}.\n` +
        `Its ${held} bookings stay; \`booking-sync reconcile\` marks those the source does not serve ` +
        "missing, and withholds the marks past RECONCILE_MAX_MISSING_SHARE until `reconcile --apply-missing`.\n",
    );
    return EXIT.ok;
  });
}
