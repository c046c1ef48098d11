/**
 * Connection settings, shared by the store's connection and the writer thread's.
 */
import type Database from "better-sqlite3";
import type { Logger } from "../sync/ports.js";

/** How long a statement waits for another connection's lock before failing, ms. */
export const BUSY_TIMEOUT_MS = 5000;

/**
 * Page cache per connection, KiB: SQLite's own default, where better-sqlite3 sets 16 MiB. The
 * cache fills during a sync and costs about one and a half times its size in RSS, per connection.
 * With the writer thread a bigger one bought no speed up to 300k bookings (the random `_id`
 * index's pages it misses come back from the OS's cache); without it, 8 MiB was about 5% faster.
 */
export const CACHE_KIB = 2 * 1024;

/**
 * WAL pages a commit may leave before it checkpoints them into the database, about 4 KiB each
 * (SQLite's default is 1000). Each checkpoint copies the index pages that every batch rewrites and
 * syncs the disk twice, so fewer ones write less; much larger ones make single checkpoints long
 * enough to stall the writer. Bounds the WAL at about 16 MB between checkpoints.
 */
export const WAL_AUTOCHECKPOINT_PAGES = 4000;

/** Applies the connection settings; a read-only connection gets only the first two. */
export function applyPragmas(db: Database.Database, readonly: boolean, logger?: Logger): void {
  db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
  db.pragma("foreign_keys = ON");
  if (readonly) return;
  // WAL lets analysts read while the worker writes (invariant 5); NORMAL sync is safe under WAL.
  const mode = db.pragma("journal_mode = WAL", { simple: true });
  if (mode !== "wal")
    logger?.warn({ journalMode: mode }, "database is not in WAL mode; readers may block the writer");
  db.pragma("synchronous = NORMAL");
  db.pragma(`cache_size = -${CACHE_KIB}`);
  db.pragma(`wal_autocheckpoint = ${WAL_AUTOCHECKPOINT_PAGES}`);
}

/**
 * Copies the WAL into the database and truncates it, without waiting: readers go on meanwhile,
 * and whoever opens the file next has no WAL to recover (a recovery locks out readers while it
 * runs). A reader still on an older snapshot keeps its part of the WAL until a later checkpoint.
 */
export function emptyWal(db: Database.Database): void {
  db.pragma("busy_timeout = 0");
  db.pragma("wal_checkpoint(TRUNCATE)");
}
