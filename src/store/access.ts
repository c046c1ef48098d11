/** Whether this process may write the mirror, asked before SQLite, whose errors give neither path nor fix. */
import { accessSync, constants, statSync } from "node:fs";
import { dirname, resolve } from "node:path";

const FIX = "make the file and its folder writable by this user, or point BOOKING_DB_PATH (--db) elsewhere";

/** Throws an error naming the path, the cause and the fix when the database cannot be written. */
export function checkWritable(path: string): void {
  if (path === ":memory:" || path.startsWith("file:")) return;
  const file = resolve(path);
  for (const each of [file, `${file}-wal`, `${file}-shm`]) {
    const problem = denied(each, constants.W_OK);
    const what = each === file ? "the file" : `the file ${each}`;
    if (problem) throw new Error(`cannot write ${file}: ${problem(what)}; ${FIX}`);
  }
  // A folder is written by creating files in it (W) and entered to reach them (X).
  const folder = existingAncestor(dirname(file));
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
    return (what) => `permission denied (${what} is read-only for ${who}: ${owner(path)})`;
  }
}

/** "mode 0444, owner uid 0". */
function owner(path: string): string {
  const s = statSync(path);
  return `mode ${(s.mode & 0o7777).toString(8).padStart(4, "0")}, owner uid ${s.uid}`;
}

/** `folder`, or its nearest ancestor that exists (where `mkdir -p` starts creating). */
function existingAncestor(folder: string): string {
  for (let dir = folder; ; dir = dirname(dir)) {
    try {
      statSync(dir);
      return dir;
    } catch {
      if (dirname(dir) === dir) return dir;
    }
  }
}
