/**
 * A new mirror holds personal data, so its file is created here with its mode before SQLite opens
 * it (SQLite gives -wal and -shm the file's mode). Whatever exists keeps its mode.
 */
import { chmodSync, closeSync, fchmodSync, mkdirSync, openSync } from "node:fs";
import { dirname, resolve } from "node:path";

/** Owner only: the default for a new database file (and so for its -wal and -shm). */
export const DEFAULT_DB_MODE = 0o600;

/** A folder's mode for a file mode: whoever may read the file may also enter the folder (0640 → 0750). */
export function folderMode(fileMode: number): number {
  return 0o700 | (fileMode & 0o077) | ((fileMode & 0o044) >> 2);
}

/** Creates the file with exactly `mode` and missing folders with `folderMode(mode)`; leaves existing ones. */
export function createDatabaseFile(path: string, mode: number = DEFAULT_DB_MODE): void {
  // Not files: SQLite's in-memory and temporary databases.
  if (path === "" || path === ":memory:" || path.startsWith("file:")) return;
  const dir = resolve(dirname(path));
  const first = mkdirSync(dir, { recursive: true, mode: folderMode(mode) });
  // mkdir's mode went through the umask; set it exactly on each folder this call created.
  if (first !== undefined) {
    const top = resolve(first);
    for (let d = dir; ; d = dirname(d)) {
      chmodSync(d, folderMode(mode));
      if (d === top || dirname(d) === d) break;
    }
  }
  let fd: number;
  try {
    // O_EXCL: an existing file (or a link in its place) is left alone; SQLite fills the empty one.
    fd = openSync(path, "wx", mode);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "EEXIST") return;
    throw err;
  }
  try {
    fchmodSync(fd, mode);
  } finally {
    closeSync(fd);
  }
}
