/**
 * Opens the mirror: connection, pragmas, migrations, and each role's statements prepared on first
 * use. Opening and closing never take a lock that fails a reader without a busy timeout (`holdWal`).
 */
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { drizzle } from "drizzle-orm/better-sqlite3";
import { migrate } from "drizzle-orm/better-sqlite3/migrator";
import { wrapError } from "../errors.js";
import type { Logger, TimerClock } from "../sync/ports.js";
import { checkWritable } from "./access.js";
import { type BatchRule, batch } from "./batch.js";
import { eventStore, type WriteRows } from "./event-store.js";
import { createDatabaseFile, DEFAULT_DB_MODE } from "./file-modes.js";
import { takeSqliteLease } from "./lease.js";
import type { Ask } from "./mirror/ask.js";
import { SQLITE } from "./mirror/dialect.js";
import { sqliteStatements, writeSqlitePage } from "./mirror/execute.js";
import type { PersonalData } from "./personal-data.js";
import { applyPragmas, BUSY_TIMEOUT_MS, emptyWal, restWal } from "./pragmas.js";
import { sqliteSnapshot } from "./snapshot.js";
import { workerSnapshot } from "./status-worker.js";
import type { AtOnce, Store } from "./store.js";
import { answering, type Either, statusReads, storeSql } from "./store-reads.js";

/** Resolved from this file, so it works from `src/` (vitest), `dist/` (tsc) and a Docker image alike. */
const MIGRATIONS = fileURLToPath(new URL("../../drizzle", import.meta.url));

export interface OpenOptions {
  /** Told about migrations and a journal mode other than WAL; default: silent. */
  logger?: Logger | undefined;
  /** Open for reading only: nothing is created or migrated, and writes fail. Default false. */
  readonly?: boolean | undefined;
  /** When saved pages commit; default `DEFAULT_BATCH`. */
  batch?: BatchRule | undefined;
  /** Times the batch's commit; default the system's. */
  clock?: TimerClock | undefined;
  /** File mode of a new database file (and its -wal, -shm); default 0o600. An existing file keeps its own. */
  mode?: number | undefined;
  /** Hashes or drops personal fields before storing (`personalDataPolicy`); default none (keep). */
  personalData?: PersonalData | undefined;
  /** Whether pages record booking events (`booking_events`); default true. */
  events?: boolean | undefined;
  /** Called after each commit of saved pages: the events stream has news. */
  onCommit?: (() => void) | undefined;
}

/** Opens (creating if missing) and migrates the mirror at `path`; errors name the path. */
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
    if (!readonly) migrateStore(db, options.logger);
    const keeper = readonly ? undefined : holdWal(path);
    return assemble(path, db, keeper, options);
  } catch (err) {
    db.close();
    throw wrapError(`open database ${path}`, err);
  }
}

function migrateStore(db: Database.Database, logger?: Logger): void {
  const orm = drizzle({ client: db });
  const before = appliedMigrations(db);
  // A migration that rebuilds `bookings` drops the old table: with foreign keys on, that would
  // cascade to every booking's packages, items and changes. Drizzle migrates in one transaction,
  // where the migration's own PRAGMA is ignored, so keys are off around it and checked after. The
  // rename that ends a rebuild would also refuse while an analyst's own view names `bookings`;
  // the legacy rule renames without reading views, which name the table again once it is back.
  db.pragma("foreign_keys = OFF");
  db.pragma("legacy_alter_table = ON");
  try {
    migrate(orm, { migrationsFolder: MIGRATIONS });
  } catch (err) {
    // Drizzle reads the applied list outside its transaction, so two processes opening a new file
    // at once can both try the first migration; the loser's retry sees it applied and does nothing.
    logger?.debug({ err }, "migration attempt failed; retrying once");
    migrate(orm, { migrationsFolder: MIGRATIONS });
  } finally {
    db.pragma("legacy_alter_table = OFF");
    db.pragma("foreign_keys = ON");
  }
  const applied = appliedMigrations(db) - before;
  const broken = applied > 0 ? (db.pragma("foreign_key_check") as unknown[]).length : 0;
  if (broken > 0) throw new Error(`migration left ${broken} rows without their booking`);
  if (applied > 0) logger?.info({ applied, total: before + applied }, "database migrated");
}

/**
 * A read-only connection, closed last: the last connection to close a WAL database locks the file
 * to delete the WAL, failing a reader without a busy timeout; a read-only one never does. The status
 * reads use it too, so they see what is committed and never meet the writer's open batch.
 */
function holdWal(path: string): Database.Database {
  const keeper = new Database(path, { readonly: true, fileMustExist: true });
  keeper.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
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

/** The statements both stores answer, in SQLite's dialect. */
const SQL = storeSql(SQLITE);

function assemble(
  path: string,
  db: Database.Database,
  keeper: Database.Database | undefined,
  o: OpenOptions,
): Store {
  const pages = batch(db, o.batch, o.clock, o.onCommit);
  const recordEvents = o.events ?? true;
  /** The run being recorded, for `booking_changes`. */
  let currentRun: number | null = null;
  // Each statement is prepared at its first use: a read-only connection never prepares a write.
  const statements = sqliteStatements(db);
  const { ask } = statements;
  // A read-only store's own connection never writes; a writer's status reads go to the keeper.
  const snapshot = sqliteSnapshot(keeper ?? db, path);
  // The page's scans, off the event loop: a thread started at the first view (status-worker.ts).
  const pageSnapshot = workerSnapshot(path);
  /**
   * Any write but a page's commits the saved pages first, so the mirror's order is the core's; after
   * a loss it is refused, as it would build on pages that are not there (reconcile's marks).
   */
  const afterPages = (write: Ask<unknown>) => {
    pages.flush();
    const answer = statements.ask(write, recordEvents);
    // Reconcile's marks commit events outside the batch: waiters hear of them as of a page's.
    if (recordEvents && write.events) o.onCommit?.();
    return answer;
  };
  /** Commits the saved pages first (a loss is the run's to report), then writes alone. */
  const writeOutsidePages: WriteRows = (sql, params) => {
    try {
      pages.commit();
    } catch {}
    return statements.all({ sql, params });
  };
  const store: Store = {
    backend: "sqlite",
    location: path,
    db,
    path,
    close: () => {
      if (!db.open) return;
      void pageSnapshot.close();
      try {
        // A loss here costs only a re-read: those pages' progress is lost with them.
        try {
          pages.commit();
        } catch {}
        if (keeper) emptyWal(db);
      } finally {
        db.close();
        keeper?.close();
      }
    },
    flush: () => pages.flush(),
    save: (page) =>
      pages.page(() =>
        writeSqlitePage(statements, page, {
          runId: currentRun,
          events: recordEvents,
          personal: o.personalData,
        }),
      ),
    ...(answering(SQL.reads, ask) as AtOnce<Either<typeof SQL.reads>>),
    ...(answering(SQL.afterPages, afterPages) as AtOnce<Either<typeof SQL.afterPages>>),
    readProgress: <T>(stream: string) => ask(SQL.readProgress<T>(stream)),
    startRun: (r) => {
      pages.commit();
      pages.reset();
      currentRun = ask(SQL.runs.startRun(r));
      return currentRun;
    },
    finishRun: (id, result) => {
      // The run has flushed and reported any loss (sync/run.ts); its end is recorded whatever.
      try {
        pages.commit();
      } catch {}
      ask(SQL.runs.finishRun(id, result));
      currentRun = null;
      restWal(db, path, o.logger);
    },
    ...statusReads(snapshot, pageSnapshot),
    events: eventStore(snapshot, writeOutsidePages, SQLITE),
    takeWriterLease: (o) => takeSqliteLease(store, o),
  };
  return store;
}
