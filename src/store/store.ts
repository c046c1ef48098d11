/**
 * The mirror as the CLI and daemon hold it (`Mirror`, either database), and the SQLite one as
 * `openStore` gives it (`Store`), whose answers come at once and which tests and tools read with SQL.
 */
import type Database from "better-sqlite3";
import type { EventStore } from "../events/ports.js";
import type { Awaitable, SyncStore } from "../sync/ports.js";
import type { Either, statusReads, storeSql } from "./store-reads.js";
import type { WriterLease, WriterLeaseOptions } from "./writer-lease.js";

/** What reads on the readers' connection: asynchronous on SQLite too (store/snapshot.ts). */
type StatusReads = ReturnType<typeof statusReads>;

/** The core's port plus what every command and the daemon need, whichever database keeps the mirror. */
export interface Mirror
  extends SyncStore,
    Pick<Either<ReturnType<typeof storeSql>["reads"]>, "countBookings" | "lastRun" | "recentRuns">,
    StatusReads {
  readonly backend: "sqlite" | "postgres";
  /** Where the mirror is, safe to log: the file's path, or the URL without its password. */
  readonly location: string;
  /** Tries once to become the mirror's only writer. */
  takeWriterLease(options: WriterLeaseOptions): Awaitable<WriterLease>;
  /** The booking events stream: the outbox its pages write, and the webhook sink's state. */
  readonly events: EventStore;
  /** Commits what was saved and closes the connections; the mirror is unusable afterwards. */
  close(): Awaitable<void>;
}

/** Whether the mirror is a SQLite file, which the tools that read it with SQL need. */
export function isSqlite(mirror: Mirror): mirror is Store {
  return mirror.backend === "sqlite";
}

/** A mirror's methods as SQLite serves them: every answer at once. */
export type AtOnce<S> = {
  [K in keyof S]: S[K] extends (...args: infer A) => Awaitable<infer R> ? (...args: A) => R : S[K];
};

type Snapshots = keyof StatusReads;

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
