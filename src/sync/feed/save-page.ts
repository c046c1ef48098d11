/** Saving a feed page with the walk's progress after it, and what the walk says about it in the log. */
import type { BookingType, FeedPage, PageWrite, RunCounters, SyncDeps, WalkProgress } from "../ports.js";

const PROGRESS_LOG_MS = 5_000;

/** Saves pages for one walk; logs each reject, and the walk's progress every few seconds. */
export function pageSaver(
  deps: SyncDeps,
  options: { stream: string; bookingType?: BookingType | undefined },
  totals: RunCounters,
) {
  let lastLogAt = deps.clock.now().getTime();
  /** Saves `page` with the progress after it (null and a checkpoint when the walk ended with it). */
  return (page: Pick<FeedPage, "records">, walk: WalkProgress | null, checkpoint?: string): void => {
    const records: Extract<PageWrite, { source: "feed" }>["records"] = [];
    const rejects: PageWrite["rejects"] = [];
    for (const r of page.records) {
      if (r.ok) records.push(r);
      else rejects.push(r);
    }
    const now = deps.clock.now();
    const counts = deps.store.save({
      source: "feed",
      records,
      rejects,
      bookingType: options.bookingType,
      progress: { stream: options.stream, value: walk, checkpoint },
      syncedAt: now.toISOString(),
    });
    totals.inserted += counts.inserted;
    totals.updated += counts.updated;
    totals.unchanged += counts.unchanged;
    totals.rejected += counts.rejected;
    for (const r of rejects) {
      deps.logger.warn(
        { stream: options.stream, id: r.id, reason: r.reason },
        "record rejected and quarantined",
      );
    }
    if (now.getTime() - lastLogAt < PROGRESS_LOG_MS) return;
    lastLogAt = now.getTime();
    deps.logger.info(
      { stream: options.stream, pages: totals.pages, new: totals.inserted, upTo: walk?.upTo },
      "sync progress",
    );
  };
}
