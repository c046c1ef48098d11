/**
 * The mirror as the CLI and daemon hold it (`Mirror`, either database), and the SQLite one as
 * `openStore` gives it (`Store`), whose answers come at once and which tests and tools read with SQL.
 */
import type Database from "better-sqlite3";
import type { Awaitable, RunKind, SyncStore } from "../sync/ports.js";
import type { StatusPageData } from "./daily.js";
import type { FillStatus } from "./fill-status.js";
import type { BookingFilter } from "./reads.js";
import type { RunRow } from "./runs.js";
import type { Status } from "./status.js";
import type { WriterLease, WriterLeaseOptions } from "./writer-lease.js";

/** The core's port plus what every command and the daemon need, whichever database keeps the mirror. */
export interface Mirror extends SyncStore {
  readonly backend: "sqlite" | "postgres";
  /** Where the mirror is, safe to log: the file's path, or the URL without its password. */
  readonly location: string;
  /** How many bookings the mirror holds, optionally narrowed. */
  countBookings(filter?: BookingFilter): Awaitable<number>;
  /** Tries once to become the mirror's only writer. */
  takeWriterLease(options: WriterLeaseOptions): Awaitable<WriterLease>;
  /** The newest run, of the given kind when one is given. */
  lastRun(kind?: RunKind): Awaitable<RunRow | undefined>;
  /** The newest `n` runs, newest first. */
  recentRuns(n: number): Awaitable<RunRow[]>;
  /**
   * What `booking-sync status` shows as of `at`, read in one snapshot on a connection of its own:
   * what is committed, never waiting behind the writer's open batch.
   */
  readStatus(at: Date): Promise<Status>;
  /** Each stream's committed checkpoint, read as `readStatus` reads. */
  readCheckpoints(): Promise<Record<string, string | null>>;
  /** The fill stored as `stream`'s committed progress as of `at`, read as `readStatus` reads; null when none. */
  readFill(stream: string, at: Date): Promise<FillStatus | null>;
  /** The status and the daily totals of the status page as of `at`, in one snapshot, as `readStatus`. */
  readStatusPage(at: Date): Promise<StatusPageData>;
  /** Commits what was saved and closes the connections; the mirror is unusable afterwards. */
  close(): Awaitable<void>;
}

/** Whether the mirror is a SQLite file, which the tools that read it with SQL need. */
export function isSqlite(mirror: Mirror): mirror is Store {
  return mirror.backend === "sqlite";
}

/** A mirror's methods as SQLite serves them: every answer at once. */
type AtOnce<S> = {
  [K in keyof S]: S[K] extends (...args: infer A) => Awaitable<infer R> ? (...args: A) => R : S[K];
};

/** What reads on the readers' connection: asynchronous on SQLite too (store/snapshot.ts). */
type Snapshots = "readStatus" | "readStatusPage" | "readCheckpoints" | "readFill";

export interface Store
  extends Omit<AtOnce<Mirror>, "readProgress" | "takeWriterLease" | Snapshots>,
    Pick<Mirror, Snapshots> {
  readonly backend: "sqlite";
  readProgress<T>(stream: string): { checkpoint: string | null; progress: T | null };
  takeWriterLease(options: WriterLeaseOptions): WriterLease;
  /** The better-sqlite3 connection, for modules that need raw SQL. */
  readonly db: Database.Database;
  /** The database file this store opened. */
  readonly path: string;
}
