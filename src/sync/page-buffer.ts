/**
 * Pages read but not yet committed. Several pages share one transaction (bounded by count and
 * age), which is much cheaper than a commit per page, while progress still commits with its rows.
 *
 * When the store offers a writer thread (`feedPipe`), each page is handed to it as soon as the
 * next request is on its way, and commits are only sent, not awaited, until the walk ends: the
 * writes then overlap the fetching instead of stalling it.
 */
import type { FeedBatch, FeedPage, FeedPipe, SyncDeps, UpsertCounts, WalkProgress } from "./ports.js";
import type { WalkOptions, WalkTotals } from "./walk.js";

const PROGRESS_LOG_MS = 5_000;

export class PageBuffer {
  private bookings: FeedBatch["bookings"] = [];
  private rejects: FeedBatch["rejects"] = [];
  /** Pages added since the last commit (with a pipe, some may be handed over already). */
  private pages = 0;
  private progress: WalkProgress | null = null;
  private checkpoint: string | undefined;
  private firstAt = 0;
  private lastLogAt = 0;
  private readonly pipe: FeedPipe | undefined;
  /** The pending hand-over of the pages added since the last one (pipe only). */
  private handover: NodeJS.Immediate | undefined;
  /** A hand-over that failed in the background, thrown by the next call. */
  private failure: unknown;

  constructor(
    private readonly deps: SyncDeps,
    private readonly options: WalkOptions,
    private readonly totals: WalkTotals,
  ) {
    this.pipe = deps.store.feedPipe?.();
    this.pipe?.begin();
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
    // After this call the walk awaits the next page, whose request is sent first: preparing the
    // rows then uses time otherwise spent waiting for the server.
    if (this.pipe) this.handover ??= setImmediate(() => this.handOver());
  }

  /** Commits when enough pages are buffered or the oldest has waited long enough. */
  commitIfDue(): void {
    this.throwIfFailed();
    if (this.pipe) this.count(this.pipe.settle(false));
    const age = this.deps.clock.now().getTime() - this.firstAt;
    if (this.pages >= (this.options.batchPages ?? 20) || age >= (this.options.batchMs ?? 1000)) this.store();
  }

  /** Stores the buffered pages and the progress as of the last of them, in one transaction, and waits for it. */
  commit(): void {
    this.throwIfFailed();
    this.store();
    if (this.pipe) this.count(this.pipe.settle(true));
  }

  private store(): void {
    if (this.pages === 0) return;
    if (this.pipe) {
      this.send(this.pipe, true);
      this.pages = 0;
    } else {
      const counts = this.deps.store.commitFeedBatch(this.batch());
      this.count({ ...counts, rejected: this.rejects.length });
      this.logRejects();
      this.bookings = [];
      this.rejects = [];
      this.pages = 0;
    }
    this.logProgress();
  }

  /** Runs in the background: hands the pages added so far to the writer thread, uncommitted. */
  private handOver(): void {
    this.handover = undefined;
    if (!this.pipe || this.failure !== undefined) return;
    try {
      if (this.bookings.length > 0 || this.rejects.length > 0) this.send(this.pipe, false);
    } catch (err) {
      this.failure = err;
    }
  }

  private send(pipe: FeedPipe, commit: boolean): void {
    if (this.handover) clearImmediate(this.handover);
    this.handover = undefined;
    pipe.send(this.batch(), commit);
    this.logRejects();
    this.bookings = [];
    this.rejects = [];
  }

  private batch(): FeedBatch {
    return {
      stream: this.options.stream,
      bookingType: this.options.bookingType,
      bookings: this.bookings,
      rejects: this.rejects,
      walk: this.progress,
      checkpoint: this.checkpoint,
      syncedAt: this.deps.clock.now().toISOString(),
    };
  }

  private throwIfFailed(): void {
    if (this.failure !== undefined) throw this.failure;
  }

  private count(counts: UpsertCounts): void {
    this.totals.inserted += counts.inserted;
    this.totals.updated += counts.updated;
    this.totals.unchanged += counts.unchanged;
    this.totals.rejected += counts.rejected;
  }

  private logRejects(): void {
    for (const r of this.rejects) {
      this.deps.logger.warn(
        { stream: this.options.stream, id: r.id, reason: r.reason },
        "record rejected and quarantined",
      );
    }
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
        upTo: this.progress?.upTo,
      },
      "sync progress",
    );
  }
}
