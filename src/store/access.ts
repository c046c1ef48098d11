/**
 * Whether a path can be the mirror and this process may write it, asked before SQLite, whose errors
 * ("unable to open database file", "file is not a database", ENOTDIR) give neither path nor fix.
 */
import { accessSync, closeSync, constants, openSync, readSync, type Stats, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { ConfigError } from "../errors.js";

const FIX = "make the file and its folder writable by this user, or point BOOKING_DB_PATH (--db) elsewhere";

/** The first bytes of every SQLite database file. */
const SQLITE_HEADER = Buffer.from("SQLite format 3\0", "latin1");

/**
 * Throws a ConfigError naming the path and what it is when it cannot be a database file at all: a
 * folder, a file that holds something else (never overwritten), or a path under a file. A missing
 * file or an empty one is fine: SQLite creates the database in it.
 */
export function checkDatabasePath(path: string): void {
  if (path === ":memory:" || path.startsWith("file:")) return;
  const file = resolve(path);
  const found = nearestExisting(file);
  if (!found) return;
  const hint = (what: string) => `point --db or BOOKING_DB_PATH at ${what}`;
  if (found.path !== file) {
    if (found.stats.isDirectory()) return;
    throw new ConfigError(`database ${file} cannot be opened: ${found.path} is a file, not a folder`, {
      hint: hint(`a file in a folder, e.g. --db ${join(dirname(found.path), "bookings.db")}`),
    });
  }
  if (found.stats.isDirectory()) {
    throw new ConfigError(`database ${file} is a folder, not a file`, {
      hint: hint(`a file, e.g. --db ${join(file, "bookings.db")}`),
    });
  }
  if (found.stats.isFile() && found.stats.size > 0 && !startsWithSqliteHeader(file)) {
    throw new ConfigError(`database ${file} is not a SQLite database: the file holds something else`, {
      hint: hint("the mirror's file, or at a path where no file exists yet to create one"),
    });
  }
}

/** False only when the file could be read and its first bytes are not SQLite's. */
function startsWithSqliteHeader(file: string): boolean {
  let fd: number | undefined;
  try {
    fd = openSync(file, "r");
    const head = Buffer.alloc(SQLITE_HEADER.length);
    const read = readSync(fd, head, 0, head.length, 0);
    return read === head.length && head.equals(SQLITE_HEADER);
  } catch {
    // Unreadable: the permission check (or SQLite) says why, with the path.
    return true;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * Throws an error naming the path, the cause and the fix when the database cannot be written; a
 * ConfigError first when the path cannot be a database at all (`checkDatabasePath`).
 */
export function checkWritable(path: string): void {
  if (path === ":memory:" || path.startsWith("file:")) return;
  checkDatabasePath(path);
  const file = resolve(path);
  for (const each of [file, `${file}-wal`, `${file}-shm`]) {
    const problem = denied(each, constants.W_OK);
    const what = each === file ? "the file" : `the file ${each}`;
    if (problem) throw new Error(`cannot write ${file}: ${problem(what)}; ${FIX}`);
  }
  // A folder is written by creating files in it (W) and entered to reach them (X); the nearest one
  // that exists is where `mkdir -p` starts creating.
  const folder = nearestExisting(dirname(file))?.path ?? dirname(file);
  const problem = denied(folder, constants.W_OK | constants.X_OK);
  if (problem) {
    const where =
      folder === dirname(file) ? `its folder ${folder}` : `${folder}, where its folder would be created,`;
    throw new Error(`cannot write ${file}: ${problem(where)}; ${FIX}`);
  }
}

/** Why `path` cannot be accessed with `mode`; undefined when it can or does not exist. */
function denied(path: string, mode: number): ((what: string) => string) | undefined {
  try {
    accessSync(path, mode);
    return undefined;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return undefined;
    if (code === "EROFS") return (what) => `read-only file system (${what} is on a read-only mount)`;
    const who = process.getuid ? `uid ${process.getuid()}` : "this user";
    const s = statSync(path);
    const owner = `mode ${(s.mode & 0o7777).toString(8).padStart(4, "0")}, owner uid ${s.uid}`;
    return (what) => `permission denied (${what} is read-only for ${who}: ${owner})`;
  }
}

/** `path` or its nearest ancestor that exists, with what it is; undefined when none can be seen. */
function nearestExisting(path: string): { path: string; stats: Stats } | undefined {
  for (let dir = path; ; dir = dirname(dir)) {
    try {
      return { path: dir, stats: statSync(dir) };
    } catch {
      if (dirname(dir) === dir) return undefined;
    }
  }
}
