/** The ports the sync core talks through: it constructs nothing, so a test can hand it fakes. */
import type { FullBooking, SummaryBooking } from "../api/schemas.js";
import type { FillProgress, WalkProgress } from "./fill/progress.js";

export type { WalkProgress } from "./fill/progress.js";

export type BookingType = "IN" | "LC";

/**
 * A record of a page after validation. `ok` records steer the walk; a reject steers nothing, and is
 * still a booking (`booking` set) when it has a usable `_id`: only what cannot be a booking is
 * quarantined alone.
 */
export type Checked<T> =
  | {
      ok: true;
      id: string;
      /** `createdAt` in UTC with milliseconds (truncated): the stored form. */
      createdAt: string;
      /** `createdAt` at its full precision, UTC with nine fraction digits: what steers the walk. */
      at: string;
      /** What the typed columns read: the record with each field that failed its check left out. */
      record: T;
      /** The record as received, every field kept, values past a bound replaced by markers (api/bounds.ts). */
      raw: unknown;
      /** `raw`'s JSON text as the source served it, when the client kept it: what the mirror stores. */
      text?: string;
      /** What was wrong with it, one line a field; empty for almost every record. */
      problems: readonly string[];
    }
  | {
      ok: false;
      /** `_id` if the raw record had one. */
      id: string | null;
      /** `createdAt` (UTC, milliseconds) if the raw record had a valid one; stored, never steers the walk. */
      createdAt: string | null;
      reason: string;
      /** The record as received, bounded as for `ok` records. */
      raw: unknown;
      /** As for `ok` records. */
      text?: string;
      /** Set when the record is still a booking (a usable `_id`): what its typed columns read. */
      booking?: T | undefined;
    };

/** A record that steers the walk: a valid summary of a feed page, or full record of a list page. */
export type Valid<T> = Extract<Checked<T>, { ok: true }>;
/** A record that cannot steer the walk: stored as a booking when it has `booking`, else quarantined. */
export type Reject = Extract<Checked<unknown>, { ok: false }>;

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

/** A stream's stored state: one per booking-type scope of the feed. */
export interface StreamState {
  stream: string;
  /** Newest `createdAt` known to be fully mirrored (ISO); null before the first completed walk. */
  checkpoint: string | null;
  /** The unfinished fill (or a single walk an earlier version saved), if a run stopped part-way. */
  walk: FillProgress | WalkProgress | null;
}

/** A stream's resumable position, saved with the rows that brought it there. */
export interface Progress {
  /** `feed`, `feed:IN`, `details`, `backfill`... */
  stream: string;
  /** Any JSON value; null clears it (the stream's work is done). */
  value: unknown | null;
  /** A new checkpoint; the store never moves one backwards. */
  checkpoint?: string | undefined;
}

/**
 * One page as the mirror keeps it: its records, its rejects and the progress it brings, which the
 * store never makes durable apart. The same `_id` may appear more than once (the last wins).
 */
export type PageWrite =
  | {
      source: "feed";
      records: Valid<SummaryBooking>[];
      rejects: Reject[];
      /** The stream's booking type filter; when set, stored as each booking's `booking_type`. */
      bookingType?: BookingType | undefined;
      progress?: Progress | undefined;
      /** When the page was read (ISO): `summary_synced_at`, and `first_seen_at` for new rows. */
      syncedAt: string;
    }
  | {
      source: "list";
      records: Valid<FullBooking>[];
      rejects: Reject[];
      /** The run whose list pass served these records; reconcile uses it to tell who is missing. */
      listedBy?: number | undefined;
      progress?: Progress | undefined;
      /** When the page was read (ISO): `detail_synced_at`, and `first_seen_at` for new rows. */
      syncedAt: string;
    };

/** What a page's upsert did. `unchanged` rows were seen with the same content as stored. */
export interface UpsertCounts {
  inserted: number;
  updated: number;
  unchanged: number;
  rejected: number;
}

export type RunKind = "sync" | "details" | "backfill" | "reconcile";

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
  status: "success" | "failed" | "aborted";
  finishedAt: string;
  checkpointAfter: string | null;
  error: string | null;
  /** Gaps the repair found in the mirror and read (list/repair.ts); default 0. */
  gapsFound?: number | undefined;
  /** Bookings the repair added; default 0. */
  repaired?: number | undefined;
}

/** Bookings a finished details pass read past without finding, and how long they are put off. */
export interface DetailsPutOff {
  ids: readonly string[];
  /** Their misses in a row, this one counted: `details_misses`. */
  misses: number;
  /** When (ISO) a pass seeks them again: `details_seek_after`. */
  seekAfter: string;
}

/** A booking that needs details, and how many details passes in a row did not find it. */
export interface NeedingDetails {
  id: string;
  createdAt: string;
  /** Passes in a row that read past it; 0 once its details are read or none looked. */
  misses: number;
}

/** Which bookings `markUnlisted` judges after a complete reconcile pass. */
export interface UnlistedScope {
  /** The reconcile run that passed `listedBy: runId` with every page. */
  runId: number;
  /** When the pass began (ISO): bookings created or first seen later are not judged. */
  startedAt: string;
  /** The time recorded in `missing_since` (ISO). */
  at: string;
  /** Only bookings created at or after this time (ISO); default (or null) every booking. */
  since?: string | null | undefined;
  /** Only bookings of this source platform, when the pass was filtered by it; default all. */
  sourcePlatform?: string | undefined;
  /**
   * A typed mirror's type: only its bookings are judged, so the other type's an older version stored
   * are never counted missing; default every booking.
   */
  bookingType?: BookingType | undefined;
}

/** A value, or a promise of one: SQLite answers at once, PostgreSQL over the network. */
export type Awaitable<T> = T | Promise<T>;

/** The mirror, as the core sees it; the core awaits every answer, whichever backend gives it. */
export interface SyncStore {
  /**
   * Stores a page's rows with its progress. Pages are saved in order and made durable in order,
   * never a page's rows without its progress; the store decides when it commits (see store/batch.ts).
   */
  save(page: PageWrite): Awaitable<UpsertCounts>;
  /** Makes every saved page durable now; throws if saved pages were lost since the run started. */
  flush(): Awaitable<void>;
  /** The stream's checkpoint and unfinished walk (both null for a new stream). */
  readStream(stream: string): Awaitable<StreamState>;
  /** A stream's checkpoint and stored progress, both null when never written. */
  readProgress<T>(stream: string): Awaitable<{ checkpoint: string | null; progress: T | null }>;
  /**
   * Bookings without details or with details older than their summary, newest first, at most
   * `limit`; not those a details pass put off past `now` (`putOffDetails`).
   */
  bookingsNeedingDetails(limit: number, now: string): Awaitable<NeedingDetails[]>;
  /** Bookings the mirror accounts for (rows not marked missing), created since a time. */
  countAccounted(since?: string | null): Awaitable<number>;
  /** Which of `ids` the mirror has no row for (or only one marked missing). */
  absentIds(ids: readonly string[]): Awaitable<string[]>;
  /** Which of `ids` the mirror first stored before `at` (marked missing since or not), in their order. */
  storedBefore(ids: readonly string[], at: string): Awaitable<string[]>;
  /** Whether the mirror holds a booking (of `type`) not marked missing created strictly between `after` and `before` (UTC, ms; null: no bound), other than `except`. */
  holdsBetween(
    after: string,
    before: string | null,
    type?: BookingType,
    except?: readonly string[],
  ): Awaitable<boolean>;
  /** Puts off those of `putOff.ids` still without current details; returns how many. */
  putOffDetails(putOff: DetailsPutOff): Awaitable<number>;
  /** Sets `missing_since` on bookings in scope the run did not list; returns how many were newly marked. */
  markUnlisted(scope: UnlistedScope): Awaitable<number>;
  /** The distinct createdAt of the bookings `markUnlisted` would mark, newest first, at most `limit`. */
  unlistedTimes(scope: UnlistedScope, limit: number): Awaitable<string[]>;
  /** How many bookings `markUnlisted` would mark now (`unlisted`), of how many in scope it judges (`judged`). */
  countUnlisted(scope: UnlistedScope): Awaitable<{ unlisted: number; judged: number }>;
  /** Records the start of a run; returns its id. */
  startRun(run: RunStart): Awaitable<number>;
  /** Records how a run ended, once everything saved before it is durable. */
  finishRun(id: number, result: RunFinish): Awaitable<void>;
  /** Records a drift check's totals on a run. */
  recordDrift(runId: number, sourceTotal: number, localTotal: number): Awaitable<void>;
}

/** Time, as a parameter so tests set it instead of sleeping. */
export interface Clock {
  now(): Date;
}

/**
 * A clock that keeps timers too (graphile-worker's `useNodeTime`): what waits (a batch's commit, a
 * standby's retry) asks it, so a test moves time instead of racing it.
 */
export interface TimerClock extends Clock {
  /**
   * Calls `fn` once, `ms` milliseconds from now; a pending call never keeps the process alive.
   * Returns what cancels the call (harmless once it happened).
   */
  setTimeout(fn: () => void, ms: number): () => void;
}

/** The logger methods the core uses; a pino logger satisfies it. */
export interface Logger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

/** The world the core runs in; `S` narrows the store to what a part of the core uses. */
export interface SyncDeps<S = SyncStore> {
  api: PartnerApi;
  store: S;
  clock: Clock;
  logger: Logger;
  /** Aborts in-flight requests; the work stops after saving what it has. */
  signal: AbortSignal;
}
