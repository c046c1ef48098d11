/** The SQLite mirror as `openStore` gives it: the core's port plus what the CLI and daemon read. */
import type Database from "better-sqlite3";
import type { BetterSQLite3Database } from "drizzle-orm/better-sqlite3";
import type { Awaitable, RunKind, SyncStore } from "../sync/ports.js";
import type { BookingFilter } from "./reads.js";
import type { RunRow } from "./runs.js";
import type * as schema from "./schema.js";

/** The port as SQLite serves it: every answer at once. */
type AtOnce<S> = {
  [K in keyof S]: S[K] extends (...args: infer A) => Awaitable<infer R> ? (...args: A) => R : S[K];
};

export interface Store extends Omit<AtOnce<SyncStore>, "readProgress"> {
  readProgress<T>(stream: string): { checkpoint: string | null; progress: T | null };
  /** The better-sqlite3 connection, for modules that need raw SQL. */
  readonly db: Database.Database;
  /** Drizzle over the same connection, with the schema's tables. */
  readonly orm: BetterSQLite3Database<typeof schema>;
  /** The database file this store opened. */
  readonly path: string;
  /** Commits what was saved and closes the connection; the store is unusable afterwards. */
  close(): void;
  /** How many bookings the mirror holds, optionally narrowed. */
  countBookings(filter?: BookingFilter): number;
  /** The newest run, of the given kind when one is given. */
  lastRun(kind?: RunKind): RunRow | undefined;
  /** The newest `n` runs, newest first. */
  recentRuns(n: number): RunRow[];
}
