/**
 * Pages read but not yet committed. Several pages share one transaction (bounded by count and
 * age), which is much cheaper than a commit per page, while progress still commits with its rows.
 */
import type { FeedBatch, FeedPage, SyncDeps, WalkProgress } from "./ports.js";
import type { WalkOptions, WalkTotals } from "./walk.js";

const PROGRESS_LOG_MS = 5_000;

export class PageBuffer {
  private bookings: FeedBatch["bookings"] = [];
  private rejects: FeedBatch["rejects"] = [];
  private pages = 0;
  private progress: WalkProgress | null = null;
  private checkpoint: string | undefined;
  private firstAt = 0;
  /** Progress is logged every few seconds of a long walk; a quick sync logs only its summary. */
  private lastLogAt: number;

  constructor(
    private readonly deps: SyncDeps,
    private readonly options: WalkOptions,
    private readonly totals: WalkTotals,
  ) {
    this.lastLogAt = deps.clock.now().getTime();
  }

  /** Buffers a page with the walk's progress after it (null and a checkpoint when the walk ended). */
  add(page: FeedPage, progress: WalkProgress | null, checkpoint?: string): void {
    if (this.pages === 0) this.firstAt = this.deps.clock.now().getTime();
    for (const r of page.records) {
      if (r.ok) this.bookings.push(r);
      else this.rejects.push(r);
    }
    this.pages++;
    this.progress = progress;
    this.checkpoint = checkpoint;
  }

  /** Commits when enough pages are buffered or the oldest has waited long enough. */
  commitIfDue(): void {
    const age = this.deps.clock.now().getTime() - this.firstAt;
    if (this.pages >= (this.options.batchPages ?? 20) || age >= (this.options.batchMs ?? 1000)) this.commit();
  }

  /** Stores the buffered pages and the progress as of the last of them, in one transaction. */
  commit(): void {
    if (this.pages === 0) return;
    const { store, clock, logger } = this.deps;
    const counts = store.commitFeedBatch({
      stream: this.options.stream,
      bookingType: this.options.bookingType,
      bookings: this.bookings,
      rejects: this.rejects,
      walk: this.progress,
      checkpoint: this.checkpoint,
      syncedAt: clock.now().toISOString(),
    });
    for (const r of this.rejects) {
      logger.warn(
        { stream: this.options.stream, id: r.id, reason: r.reason },
        "record rejected and quarantined",
      );
    }
    this.totals.inserted += counts.inserted;
    this.totals.updated += counts.updated;
    this.totals.unchanged += counts.unchanged;
    this.totals.rejected += this.rejects.length;
    this.bookings = [];
    this.rejects = [];
    this.pages = 0;
    this.logProgress();
  }

  private logProgress(): void {
    const now = this.deps.clock.now().getTime();
    if (now - this.lastLogAt < PROGRESS_LOG_MS) return;
    this.lastLogAt = now;
    const t = this.totals;
    this.deps.logger.info(
      {
        stream: this.options.stream,
        pages: t.pages,
        new: t.inserted,
        updated: t.updated,
        upTo: this.progress?.cursor,
      },
      "sync progress",
    );
  }
}
