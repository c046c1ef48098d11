/** Saving a feed page with the walk's progress after it, and what the walk says about it in the log. */
import { addCounts } from "../counters.js";
import type { BookingType, FeedPage, Progress, RunCounters, SyncDeps } from "../ports.js";
import { splitRecords } from "../records.js";

const PROGRESS_LOG_MS = 5_000;

/** Saves pages for one walk; logs the walk's progress every few seconds. */
export function pageSaver(
  deps: SyncDeps,
  options: { stream: string; bookingType?: BookingType | undefined },
  totals: RunCounters,
) {
  let lastLogAt = deps.clock.now().getTime();
  /** Saves `page` with the stream's progress after it. */
  return async (page: Pick<FeedPage, "records">, progress: Progress, upTo?: string | null): Promise<void> => {
    const { records, rejects } = splitRecords(page.records, deps.logger, { stream: options.stream });
    const now = deps.clock.now();
    const counts = await deps.store.save({
      source: "feed",
      records,
      rejects,
      bookingType: options.bookingType,
      progress,
      syncedAt: now.toISOString(),
    });
    addCounts(totals, counts);
    if (now.getTime() - lastLogAt < PROGRESS_LOG_MS) return;
    lastLogAt = now.getTime();
    deps.logger.info(
      { stream: options.stream, pages: totals.pages, new: totals.inserted, upTo },
      "sync progress",
    );
  };
}
