/**
 * The narrow ports the sync core talks through. The core receives these and constructs nothing,
 * so a test can hand it a fake in a few lines while the real adapters are tested for real.
 */
import type { FullBooking, SummaryBooking } from "../api/schemas.js";
import type { Anchor } from "./window.js";

export type BookingType = "IN" | "LC";

/** A record of a page after validation: either usable, or to be quarantined with its reason. */
export type Checked<T> =
  | {
      ok: true;
      id: string;
      /** `createdAt` in UTC with milliseconds (truncated): the stored form. */
      createdAt: string;
      /** `createdAt` at its full precision, UTC with nine fraction digits: what steers the walk. */
      at: string;
      record: T;
      /**
       * Its text exactly as received (UTF-8 bytes, a view of the response body), when it could be
       * cut from the body; what the mirror stores. Decoded only as the rows are built, so a page's
       * texts do not live as strings while the page is checked (see api/json-texts.ts).
       */
      json?: Buffer | undefined;
      /** The record as parsed, kept only when there is no `json`: it is then serialised to be stored. */
      raw?: unknown;
    }
  | {
      ok: false;
      /** `_id` if the raw record had a usable one. */
      id: string | null;
      /** `createdAt` (UTC, milliseconds) if the raw record had a valid one; stored, never steers the walk. */
      createdAt: string | null;
      reason: string;
      raw: unknown;
    };

/** One answer of fetch-recent-bookings. */
export interface FeedPage {
  records: Checked<SummaryBooking>[];
  /** The source's claim that more pages follow; the walk trusts it only where records agree. */
  hasMore: boolean;
  /** HTTP attempts this page took (1 when no retry was needed). */
  attempts: number;
}

/** One answer of list-bookings. */
export interface ListPage {
  records: Checked<FullBooking>[];
  page: number;
  pageSize: number;
  total: number;
  totalPages: number;
  /** HTTP attempts this page took (1 when no retry was needed). */
  attempts: number;
}

export interface FeedQuery {
  /** Bookings per page, 1 to 100; the client clamps. */
  limit: number;
  /** ISO 8601 timestamp; omitted for the newest page. */
  cursor?: string | undefined;
  bookingType?: BookingType | undefined;
}

export interface ListQuery {
  /** 1-based page number. */
  page: number;
  /** Bookings per page, 1 to 100; the client clamps. */
  pageSize: number;
  sourcePlatform?: string | undefined;
}

/** The partner API. Both methods retry transient faults themselves and throw `ApiError` when they give up. */
export interface PartnerApi {
  /** GET /partner/booking/fetch-recent-bookings. */
  fetchRecent(query: FeedQuery, signal?: AbortSignal): Promise<FeedPage>;
  /** GET /partner/booking/list-bookings. */
  listBookings(query: ListQuery, signal?: AbortSignal): Promise<ListPage>;
}

/** Where an unfinished walk stands; committed with each batch of pages so a restart resumes. */
export interface WalkProgress {
  /** When the walk started (ISO); the checkpoint never moves past it. */
  startedAt: string;
  /** The walk is done once a page reaches below this instant; null walks to the end of the feed. */
  floor: string | null;
  /**
   * Every booking created at or before this instant may still be unread; null starts from the
   * newest. Not the server's cursor: the request's cursor is derived from it (see window.ts).
   */
  upTo: string | null;
  /** Bookings at `upTo` the next page must serve again, proving the position; null when none is owed. */
  anchor: Anchor | null;
  /** Where to go back to if the next page does not serve the anchor again. */
  fallback: Anchor | null;
  /** Newest valid createdAt seen by this walk (an instant), the checkpoint it will record. */
  top: string | null;
  /** Pages read so far by this walk, across resumes. */
  pages: number;
}

/** A stream's stored state: one per booking-type scope of the feed. */
export interface StreamState {
  stream: string;
  /** Newest `createdAt` known to be fully mirrored (ISO); null before the first completed walk. */
  checkpoint: string | null;
  /** The unfinished walk, if a run stopped part-way. */
  walk: WalkProgress | null;
}

/** Everything one transaction stores: a batch of pages and the walk's progress as of its last page. */
export interface FeedBatch {
  stream: string;
  /** The stream's booking type filter; when set, stored as each booking's `booking_type`. */
  bookingType?: BookingType | undefined;
  /** Valid summaries; the same `_id` may appear more than once (the last wins). */
  bookings: Array<Extract<Checked<SummaryBooking>, { ok: true }>>;
  rejects: Array<Extract<Checked<unknown>, { ok: false }>>;
  /** Walk progress after this batch, or null when the walk finished with it. */
  walk: WalkProgress | null;
  /** The new checkpoint, set only by the batch that finishes a walk. */
  checkpoint?: string | undefined;
  /** When the batch was read (ISO): `summary_synced_at`, and `first_seen_at` for new rows. */
  syncedAt: string;
}

/** What an upsert did. `unchanged` rows were seen with the same content as stored. */
export interface UpsertCounts {
  inserted: number;
  updated: number;
  unchanged: number;
  rejected: number;
}

export type RunKind = "sync" | "details" | "backfill" | "reconcile";
export type RunStatus = "running" | "success" | "failed" | "aborted";

/** Counters a run accumulates and records in `sync_runs`. */
export interface RunCounters extends UpsertCounts {
  pages: number;
  requests: number;
  retries: number;
}

export interface RunStart {
  kind: RunKind;
  stream: string | null;
  startedAt: string;
  checkpointBefore: string | null;
}

export interface RunFinish extends RunCounters {
  status: Exclude<RunStatus, "running">;
  finishedAt: string;
  checkpointAfter: string | null;
  error: string | null;
  /** Gaps the repair found in the mirror and read (repair.ts); default 0. */
  gapsFound?: number | undefined;
  /** Bookings the repair added; default 0. */
  repaired?: number | undefined;
}

/**
 * Stores feed batches on another thread, so the writes overlap the next pages' fetching. Batches
 * are stored in the order sent, rows and progress in one transaction, as `commitFeedBatch` does.
 */
export interface FeedPipe {
  /**
   * Hands a batch over and returns. One sent with `commit` false shares the transaction of the
   * next committed one (the progress stored is the last batch's); the writer may commit it sooner,
   * with its own progress, when no batch follows for a while. Blocks only while the writer is too
   * far behind.
   */
  send(batch: FeedBatch, commit: boolean): void;
  /**
   * The counts of the batches committed since the last call; with `wait`, blocks until every sent
   * batch is committed. Throws the walk's first failure, every time; batches the walk sends after
   * a failed one are not stored.
   */
  settle(wait: boolean): UpsertCounts;
  /** Starts a walk: an earlier walk's failure is behind it, and its unstored batches stay unstored. */
  begin(): void;
}

/** The store as the feed walk sees it. */
export interface SyncStore {
  /** The stream's checkpoint and unfinished walk (both null for a new stream). */
  readStream(stream: string): StreamState;
  /** Stores a batch of pages and the walk's progress in one transaction. */
  commitFeedBatch(batch: FeedBatch): UpsertCounts;
  /** Optional: a writer thread for feed batches; when present the walk stores through it. */
  feedPipe?(): FeedPipe;
  /** Records the start of a run; returns its id. */
  startRun(run: RunStart): number;
  /** Records how a run ended. */
  finishRun(id: number, result: RunFinish): void;
}

/** Time, as a parameter so tests set it instead of sleeping. */
export interface Clock {
  now(): Date;
}

/** The logger methods the core uses; a pino logger satisfies it. */
export interface Logger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

/** The world the core runs in. */
export interface SyncDeps {
  api: PartnerApi;
  store: SyncStore;
  clock: Clock;
  logger: Logger;
  /** Aborts in-flight requests; the walk stops after committing what it has. */
  signal: AbortSignal;
}
