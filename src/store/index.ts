/**
 * The SQLite mirror: `openStore(path)` gives a `Store`, the core's `SyncStore` port plus the writes
 * and reads the details, reconcile, CLI and daemon need. Leases live beside it in lease.ts.
 */
import type Database from "better-sqlite3";
import type { BetterSQLite3Database } from "drizzle-orm/better-sqlite3";
import type { DetailPipe } from "../sync/detail-ports.js";
import type { RunKind, SyncStore, UpsertCounts } from "../sync/ports.js";
import type { DetailBatch } from "./detail-writes.js";
import type { BookingFilter } from "./reads.js";
import type { UnlistedScope } from "./reconcile-writes.js";
import type { RunRow } from "./runs.js";
import type * as schema from "./schema.js";

export type { DetailBatch } from "./detail-writes.js";
export {
  acquireLease,
  type LeaseHolder,
  type LeaseOptions,
  type LeaseResult,
  releaseLease,
  renewLease,
} from "./lease.js";
export { type OpenOptions, openStore } from "./open.js";
export type { BookingFilter } from "./reads.js";
export type { UnlistedScope } from "./reconcile-writes.js";
export type { RunRow } from "./runs.js";
export * as tables from "./schema.js";

export interface Store extends SyncStore {
  /** The better-sqlite3 connection, for modules that need raw SQL. */
  readonly db: Database.Database;
  /** Drizzle over the same connection, with the schema's tables. */
  readonly orm: BetterSQLite3Database<typeof schema>;
  /** The database file this store opened. */
  readonly path: string;
  /** Closes the connection; the store is unusable afterwards. */
  close(): void;
  /** Upserts full records with their packages and items, rejects and progress, in one transaction. */
  commitDetailBatch(batch: DetailBatch): UpsertCounts;
  /** With `writerThread`: the writer thread, for batches stored while the caller fetches more. */
  detailPipe?(): DetailPipe;
  /**
   * Marks bookings in scope that a complete list-bookings pass did not serve as missing (never
   * deletes them); returns how many were newly marked.
   */
  markUnlisted(scope: UnlistedScope): number;
  /** The distinct createdAt of the bookings `markUnlisted` would mark, newest first, at most `limit`. */
  unlistedTimes(scope: UnlistedScope, limit: number): string[];
  /** The stream's checkpoint and stored progress (any JSON value), both null when never written. */
  readProgress<T>(stream: string): { checkpoint: string | null; progress: T | null };
  /** Records a drift check's totals on a run. */
  recordDrift(runId: number, sourceTotal: number, localTotal: number): void;
  /** How many bookings the mirror holds, optionally narrowed. */
  countBookings(filter?: BookingFilter): number;
  /** Bookings without details or with details older than their summary, newest first, at most `limit`. */
  bookingsNeedingDetails(limit: number): Array<{ id: string; createdAt: string }>;
  /** Bookings the mirror accounts for (rows not marked missing), created since a time. */
  countAccounted(since?: string | null): number;
  /** Which of `ids` the mirror has no row for (or only one marked missing). */
  absentIds(ids: readonly string[]): string[];
  /** The newest run, of the given kind when one is given. */
  lastRun(kind?: RunKind): RunRow | undefined;
  /** The newest `n` runs, newest first. */
  recentRuns(n: number): RunRow[];
}
