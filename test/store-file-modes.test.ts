/**
 * File modes of the mirror: a new database, its -wal and -shm, and the folders made for it are
 * owner-only by default, whatever the umask; `mode` (BOOKING_DB_MODE) lets a group or everyone
 * read; an existing file keeps its mode; and a reader opens the closed database read-only.
 */
import { spawnSync } from "node:child_process";
import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { folderMode } from "../src/store/file-modes.js";
import { openStore } from "../src/store/index.js";

let dir: string;
let umask: number;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "booking-sync-modes-"));
  // The common default, so the test shows the mode is ours and not the umask's.
  umask = process.umask(0o022);
});
afterEach(() => {
  process.umask(umask);
  rmSync(dir, { recursive: true, force: true });
});

const modeOf = (path: string) => (statSync(path).mode & 0o777).toString(8).padStart(4, "0");

/** Opens, writes a little (so the WAL has content), and closes a store; returns the file's path. */
function createAndClose(path: string, options: { mode?: number } = {}): string {
  const store = openStore(path, options);
  store.db.prepare("INSERT INTO sync_state (stream, checkpoint, updated_at) VALUES ('t', NULL, 'now')").run();
  expect(statSync(`${path}-wal`).size).toBeGreaterThan(0);
  store.close();
  return path;
}

describe("database file modes", () => {
  it("creates a new database owner-only: 0600 for the file, its -wal and -shm, 0700 for each new folder", () => {
    const path = createAndClose(join(dir, "a", "b", "bookings.db"));
    expect(modeOf(path)).toBe("0600");
    expect(modeOf(`${path}-wal`)).toBe("0600");
    expect(modeOf(`${path}-shm`)).toBe("0600");
    expect(modeOf(join(dir, "a", "b"))).toBe("0700");
    expect(modeOf(join(dir, "a"))).toBe("0700");
  });

  it("leaves an existing file's and folder's mode alone", () => {
    const folder = join(dir, "existing");
    mkdirSync(folder, { mode: 0o755 });
    const path = join(folder, "bookings.db");
    writeFileSync(path, "");
    chmodSync(path, 0o644);
    createAndClose(path);
    expect(modeOf(path)).toBe("0644");
    expect(modeOf(folder)).toBe("0755");
  });

  it("with mode 0640 (BOOKING_DB_MODE), creates the file, -wal and -shm group-readable in 0750 folders, whatever the umask", () => {
    process.umask(0o077);
    const path = createAndClose(join(dir, "shared", "bookings.db"), { mode: 0o640 });
    for (const file of [path, `${path}-wal`, `${path}-shm`]) expect(modeOf(file)).toBe("0640");
    expect(modeOf(join(dir, "shared"))).toBe("0750");
  });

  it.each([
    [0o600, 0o700],
    [0o640, 0o750],
    [0o644, 0o755],
  ])("gives a folder for files of mode %o the mode %o", (file, folder) => {
    expect(folderMode(file)).toBe(folder);
  });

  it("a read-only connection opens the database after the writer closed it, and sees its rows", () => {
    const path = createAndClose(join(dir, "bookings.db"));
    const reader = new Database(path, { readonly: true, fileMustExist: true });
    expect(reader.prepare("SELECT count(*) FROM sync_state").pluck().get()).toBe(1);
    reader.close();
  });

  // Switching uid needs root; elsewhere this part is skipped.
  it.skipIf(process.getuid?.() !== 0)(
    "as root: a reader in the file's group (uid nobody) opens a 0640 database read-only while no writer runs; a 0600 one stays closed to it",
    () => {
      chmodSync(dir, 0o755);
      const shared = createAndClose(join(dir, "shared", "bookings.db"), { mode: 0o640 });
      const nogroup = 65534;
      for (const p of [join(dir, "shared"), shared, `${shared}-wal`, `${shared}-shm`])
        chownSync(p, 0, nogroup);
      const owner = createAndClose(join(dir, "owner", "bookings.db"));
      // The reader loads better-sqlite3 (its addon loads on first use) while still root, then becomes
      // nobody: the checkout and its node_modules may sit in a folder only root can enter (mktemp -d,
      // /root), while the database does not.
      const read = (path: string) => {
        const script = `
          const Database = require(${JSON.stringify(createRequire(import.meta.url).resolve("better-sqlite3"))});
          new Database(":memory:").close();
          process.setgroups([${nogroup}]); process.setgid(${nogroup}); process.setuid(${nogroup});
          try {
            const db = new Database(${JSON.stringify(path)}, { readonly: true, fileMustExist: true });
            console.log(db.prepare("SELECT count(*) FROM sync_state").pluck().get());
          } catch (err) { console.log(err.code ?? err.message); }`;
        return spawnSync(process.execPath, ["-e", script], { encoding: "utf8", cwd: dir }).stdout.trim();
      };
      expect(read(shared)).toBe("1");
      expect(read(owner)).toMatch(/^SQLITE_CANTOPEN/);
    },
  );
});
