/**
 * Opens the mirror: the connection, its pragmas and the migrations, then the statements of each
 * role (feed, details, runs, reads), prepared once per connection on first use. Opening and closing
 * never take a lock that makes a reader without a busy timeout fail (see `holdWal`).
 */
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { type BetterSQLite3Database, drizzle } from "drizzle-orm/better-sqlite3";
import { migrate } from "drizzle-orm/better-sqlite3/migrator";
import { wrapError } from "../errors.js";
import type { Logger } from "../sync/ports.js";
import { checkWritable } from "./access.js";
import { detailWriter } from "./detail-writes.js";
import { feedWriter } from "./feed-writes.js";
import { createDatabaseFile, DEFAULT_DB_MODE } from "./file-modes.js";
import type { Store } from "./index.js";
import type { PersonalData } from "./personal-data.js";
import { applyPragmas, emptyWal } from "./pragmas.js";
import { reads } from "./reads.js";
import { unlistedMarker, unlistedTimes } from "./reconcile-writes.js";
import { runs } from "./runs.js";
import * as schema from "./schema.js";
import { stateWriter } from "./state.js";
import { startWriterThread, type WriterThread } from "./writer-thread.js";

/** Resolved from this file, so it works from `src/` (vitest), `dist/` (tsc) and a Docker image alike. */
const MIGRATIONS = fileURLToPath(new URL("../../drizzle", import.meta.url));

export interface OpenOptions {
  /** Told about migrations and a journal mode other than WAL; default: silent. */
  logger?: Logger | undefined;
  /**
   * Open for reading only: no folder or file is created, no migration runs, and writes fail.
   * Default false.
   */
  readonly?: boolean | undefined;
  /**
   * Store feed batches and a backfill's pages on a writer thread with its own connection
   * (`feedPipe`, `detailPipe`), started on first use, so writes overlap fetching. Default false:
   * every write on this connection, in the caller's thread.
   */
  writerThread?: boolean | undefined;
  /**
   * File mode of a new database file, and so of its -wal and -shm (its new folders get the
   * matching search bits). Default 0o600, owner only; an existing file keeps its mode.
   */
  mode?: number | undefined;
  /**
   * Personal fields hashed or dropped in every booking and reject stored, on either connection
   * (`personalDataPolicy`); default none: stored as received (`SYNC_PERSONAL_DATA=keep`).
   */
  personalData?: PersonalData | undefined;
}

/**
 * Opens (creating it and its folder if missing) the SQLite mirror at `path` in WAL mode and
 * applies pending migrations. Throws with the path in the message when it cannot.
 */
export function openStore(path: string, options: OpenOptions = {}): Store {
  const readonly = options.readonly ?? false;
  // Said with the path and the fix, before SQLite fails with neither.
  if (!readonly) checkWritable(path);
  let db: Database.Database;
  try {
    if (!readonly) createDatabaseFile(path, options.mode ?? DEFAULT_DB_MODE);
    db = new Database(path, { readonly, fileMustExist: readonly });
  } catch (err) {
    throw wrapError(`open database ${path}`, err);
  }
  try {
    applyPragmas(db, readonly, options.logger);
    const orm = drizzle({ client: db, schema });
    if (!readonly) migrateStore(db, orm, options.logger);
    const keeper = readonly ? undefined : holdWal(path);
    const writerThread = !readonly && (options.writerThread ?? false);
    return assemble(path, db, orm, keeper, writerThread, options.personalData);
  } catch (err) {
    db.close();
    throw wrapError(`open database ${path}`, err);
  }
}

function migrateStore(
  db: Database.Database,
  orm: BetterSQLite3Database<typeof schema>,
  logger?: Logger,
): void {
  const before = appliedMigrations(db);
  try {
    migrate(orm, { migrationsFolder: MIGRATIONS });
  } catch (err) {
    // Drizzle reads the applied list outside its transaction, so two processes opening a new file
    // at once can both try the first migration; the loser's retry sees it applied and does nothing.
    logger?.debug({ err }, "migration attempt failed; retrying once");
    migrate(orm, { migrationsFolder: MIGRATIONS });
  }
  const applied = appliedMigrations(db) - before;
  if (applied > 0) logger?.info({ applied, total: before + applied }, "database migrated");
}

/**
 * A read-only connection, closed after the writable ones. The last connection to close a WAL
 * database takes an exclusive lock on the file to checkpoint and delete the WAL, and a reader that
 * opens the file meanwhile without a busy timeout (an analyst's `sqlite3` shell) fails with
 * "database is locked". A read-only connection never does that clean-up, so closing it last leaves
 * the WAL (emptied by `emptyWal`) and its index in place, and takes no such lock.
 */
function holdWal(path: string): Database.Database {
  const keeper = new Database(path, { readonly: true, fileMustExist: true });
  // A first read opens the WAL and takes the shared lock the connection then holds until closed.
  keeper.pragma("schema_version");
  return keeper;
}

function appliedMigrations(db: Database.Database): number {
  const table = db.prepare(
    "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '__drizzle_migrations'",
  );
  if (!table.get()) return 0;
  return (db.prepare("SELECT count(*) AS n FROM __drizzle_migrations").get() as { n: number }).n;
}

/** A value built on first use: a read-only connection never prepares the write statements. */
function lazy<T>(make: () => T): () => T {
  let value: T | undefined;
  return () => {
    value ??= make();
    return value;
  };
}

function assemble(
  path: string,
  db: Database.Database,
  orm: BetterSQLite3Database<typeof schema>,
  keeper: Database.Database | undefined,
  writerThread: boolean,
  personalData: PersonalData | undefined,
): Store {
  const state = lazy(() => stateWriter(db));
  const feed = lazy(() => feedWriter(db, state(), personalData));
  const detail = lazy(() => detailWriter(db, state(), personalData));
  const unlisted = lazy(() => unlistedMarker(db));
  const unlistedAt = lazy(() => unlistedTimes(db));
  const run = lazy(() => runs(db, orm));
  const read = lazy(() => reads(db, orm));
  let thread: WriterThread | undefined;
  return {
    db,
    orm,
    path,
    close: () => {
      if (!db.open) return;
      // The thread's connection closes first, so this one can empty the WAL; the keeper goes last.
      thread?.close();
      try {
        if (keeper) emptyWal(db);
      } finally {
        db.close();
        keeper?.close();
      }
    },
    commitFeedBatch: (batch) => feed()(batch),
    ...(writerThread
      ? {
          feedPipe: () => (thread ??= startWriterThread(path, { personalData })),
          detailPipe: () => (thread ??= startWriterThread(path, { personalData })),
        }
      : {}),
    commitDetailBatch: (batch) => detail()(batch),
    markUnlisted: (scope) => unlisted()(scope),
    unlistedTimes: (scope, limit) => unlistedAt()(scope, limit),
    readStream: (stream) => read().readStream(stream),
    readProgress: <T>(stream: string) => read().readProgress<T>(stream),
    countBookings: (filter) => read().countBookings(filter),
    bookingsNeedingDetails: (limit) => read().bookingsNeedingDetails(limit),
    countAccounted: (since) => read().countAccounted(since),
    absentIds: (ids) => read().absentIds(ids),
    startRun: (r) => run().startRun(r),
    finishRun: (id, result) => run().finishRun(id, result),
    recordDrift: (id, source, local) => run().recordDrift(id, source, local),
    lastRun: (kind) => run().lastRun(kind),
    recentRuns: (n) => run().recentRuns(n),
  };
}
