/**
 * The narrow store ports of the list-bookings passes (details, backfill, reconcile, drift). The
 * real `Store` satisfies them structurally; `markUnlisted` comes from store/reconcile-writes.ts.
 */
import type { FullBooking } from "../api/schemas.js";
import type { Checked, Clock, Logger, PartnerApi, SyncStore, UpsertCounts } from "./ports.js";

/** A valid full record of a list page. */
export type FullRecord = Extract<Checked<FullBooking>, { ok: true }>;
/** A record of a list page that failed validation. */
export type ListReject = Extract<Checked<unknown>, { ok: false }>;

/** Everything one transaction stores: full records, their rejects, and the caller's progress. */
export interface DetailBatch {
  /** Valid full records; the same `_id` may appear more than once (the last wins). */
  bookings: FullRecord[];
  rejects: ListReject[];
  /** When the batch was read (ISO): `detail_synced_at`, and `first_seen_at` for new rows. */
  syncedAt: string;
  /** The run whose list pass served these records; reconcile uses it to tell who is missing. */
  listedBy?: number | undefined;
  /** Resumable progress of the caller's stream, committed with the rows; `value: null` clears it. */
  progress?: { stream: string; value: unknown | null; checkpoint?: string | undefined } | undefined;
}

/** What the details pass needs from the store. */
export interface DetailStore extends Pick<SyncStore, "startRun" | "finishRun"> {
  /** Upserts full records (stale-write guarded), rejects and progress in one transaction. */
  commitDetailBatch(batch: DetailBatch): UpsertCounts;
  /** A stream's checkpoint and stored progress, both null when never written. */
  readProgress<T>(stream: string): { checkpoint: string | null; progress: T | null };
  /** Bookings without details or with details older than their summary, newest first, at most `limit`. */
  bookingsNeedingDetails(limit: number): Array<{ id: string; createdAt: string }>;
}

/**
 * A writer that stores detail batches on another thread while the caller goes on fetching. Each
 * batch commits with its progress, in the order sent (batches waiting together may share a
 * transaction); after a failed one, the rest of its pass is refused (their progress may count the
 * failed batch's pages as read).
 */
export interface DetailPipe {
  /** Hands a batch over; resolves with its counts once committed, rejects if it was not stored. */
  storeDetails(batch: DetailBatch): Promise<UpsertCounts>;
  /**
   * Starts a pass: an earlier pass's failure is behind it, and its unstored batches stay unstored.
   * Within a pass, once a batch failed every later one is refused.
   */
  beginDetails(): void;
}

/** What a backfill needs: the detail writes plus the feed streams whose checkpoints it sets. */
export interface BackfillStore
  extends DetailStore,
    Pick<SyncStore, "readStream" | "commitFeedBatch">,
    Pick<RepairStore, "countAccounted" | "absentIds"> {
  /** Optional: a writer thread for detail batches; when present the backfill stores through it. */
  detailPipe?(): DetailPipe;
}

/** Which bookings `markUnlisted` judges after a complete reconcile pass. */
export interface UnlistedScope {
  /** The reconcile run that passed `listedBy: runId` with every batch. */
  runId: number;
  /** When the pass began (ISO): bookings created or first seen later are not judged. */
  startedAt: string;
  /** The time recorded in `missing_since` (ISO). */
  at: string;
  /** Only bookings created at or after this time (ISO); default (or null) every booking. */
  since?: string | null | undefined;
  /** Only bookings of this source platform, when the pass was filtered by it; default all. */
  sourcePlatform?: string | undefined;
}

/** What a reconcile needs: the detail writes plus marking the bookings the pass did not see. */
export interface ReconcileStore extends DetailStore {
  /** Sets `missing_since` on bookings in scope the run did not list; returns how many were newly marked. */
  markUnlisted(scope: UnlistedScope): number;
  /** The distinct createdAt of the bookings `markUnlisted` would mark, newest first, at most `limit`. */
  unlistedTimes(scope: UnlistedScope, limit: number): string[];
}

/** What the repair needs: the detail writes and two counts. */
export interface RepairStore extends Pick<DetailStore, "commitDetailBatch"> {
  /** Bookings the mirror accounts for (rows not marked missing), created since a time. */
  countAccounted(since?: string | null): number;
  /** Which of `ids` the mirror has no row for. */
  absentIds(ids: readonly string[]): string[];
}

/** What the drift check needs. */
export interface DriftStore {
  /** How many bookings the mirror holds; `excludeMissing` leaves out those reconcile marked missing. */
  countBookings(filter?: { excludeMissing?: boolean | undefined }): number;
  /** Records the two totals on the run. */
  recordDrift(runId: number, sourceTotal: number, localTotal: number): void;
}

/** The world a list-bookings pass runs in. */
export interface ListDeps<S> {
  api: PartnerApi;
  store: S;
  clock: Clock;
  logger: Logger;
  /** Aborts in-flight requests; the pass stops after committing what it has. */
  signal: AbortSignal;
}
