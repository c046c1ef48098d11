/** Settings of the store's connections: the one that writes, and read-only ones. */
import { realpathSync, statSync } from "node:fs";
import type Database from "better-sqlite3";
import type { Logger } from "../sync/ports.js";

/** How long a statement waits for another connection's lock before failing, ms. */
export const BUSY_TIMEOUT_MS = 5000;

/**
 * Page cache per connection, KiB: SQLite's default rather than better-sqlite3's larger one, since a
 * sidecar's footprint comes first and missed pages come back from the OS's cache (docs/performance.md).
 */
export const CACHE_KIB = 2 * 1024;

/**
 * Page size of a new mirror, bytes (SQLite's default is 4096): a booking with details is a row of
 * about 5 KB, which on 4 KiB pages spills into an overflow page of its own; on 16 KiB pages three
 * fit whole. Only a new file takes it: a mirror in WAL mode keeps the page size it was made with.
 */
export const NEW_PAGE_SIZE = 16 * 1024;

/**
 * WAL a commit may leave before it checkpoints it, bytes (SQLite's default is 1000 pages, 4 MiB on
 * its default pages): a page written again before the checkpoint is copied to the file once, so a
 * fill costs less CPU (docs/performance.md, 2026-11-27); much more would stall the writer longer at
 * each checkpoint and leave a larger -wal file on disk.
 */
export const WAL_AUTOCHECKPOINT_BYTES = 64 * 1024 * 1024;

/**
 * WAL a finished run may leave on disk, bytes. The checkpoint at `WAL_AUTOCHECKPOINT_BYTES` suits a
 * fill, but a mirror that writes less never reaches one, and the file keeps the size it reached: a
 * new sidecar's whole mirror stayed in its -wal, and a fill left its last checkpoint's worth there.
 */
export const WAL_REST_BYTES = 4 * 1024 * 1024;

/** Applies the connection settings; a read-only connection gets only the first two. */
export function applyPragmas(db: Database.Database, readonly: boolean, logger?: Logger): void {
  db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
  db.pragma("foreign_keys = ON");
  if (readonly) return;
  // Only on a file with no page yet, before WAL mode writes the first: on another, a later VACUUM
  // outside WAL mode would take it up.
  if (db.pragma("page_count", { simple: true }) === 0) db.pragma(`page_size = ${NEW_PAGE_SIZE}`);
  // WAL lets analysts read while the worker writes (invariant 5); NORMAL sync is safe under WAL.
  const mode = db.pragma("journal_mode = WAL", { simple: true });
  if (mode !== "wal")
    logger?.warn({ journalMode: mode }, "database is not in WAL mode; readers may block the writer");
  db.pragma("synchronous = NORMAL");
  db.pragma(`cache_size = -${CACHE_KIB}`);
  const pageSize = db.pragma("page_size", { simple: true }) as number;
  db.pragma(`wal_autocheckpoint = ${Math.ceil(WAL_AUTOCHECKPOINT_BYTES / pageSize)}`);
}

/**
 * Empties the WAL of `path` into the file once it is over `WAL_REST_BYTES`. A reader's open snapshot
 * leaves it for a later run, and so does a failure: what it would move is already committed.
 */
export function restWal(db: Database.Database, path: string, logger?: Logger): void {
  const bytes = walBytes(path);
  if (bytes <= WAL_REST_BYTES) return;
  try {
    if (!emptyWal(db))
      logger?.debug({ walBytes: bytes }, "a reader holds part of the WAL; a later run empties it");
  } catch (err) {
    logger?.warn({ err, walBytes: bytes }, "could not empty the WAL; a later run tries again");
  }
}

/** Size of the file's -wal, beside the file a link names as SQLite puts it; 0 when there is none. */
function walBytes(path: string): number {
  try {
    return statSync(`${realpathSync(path)}-wal`).size;
  } catch {
    return 0;
  }
}

/**
 * Checkpoints the WAL and truncates it without waiting for readers, so the next opener has none to
 * recover; false when a reader's snapshot kept part of it (what the snapshot allows is copied).
 */
export function emptyWal(db: Database.Database): boolean {
  db.pragma("busy_timeout = 0");
  try {
    const [result] = db.pragma("wal_checkpoint(TRUNCATE)") as Array<{ busy: number }>;
    return result?.busy === 0;
  } finally {
    db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
  }
}
