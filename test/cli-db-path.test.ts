/**
 * A `--db` that cannot be the mirror's file (a folder, another program's file, a path under a file) is
 * a usage error: the CLI, run as a subprocess, names the path and what it is, ends with "Try:", exits
 * 2, and leaves the path as it was, before any request or SQLite error.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openStore } from "../src/store/index.js";
import { runCli } from "./support/harness.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "booking-sync-dbpath-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** Nothing listens on port 9 of loopback: a command that got as far as a request would say so. */
const env = (db: string) => ({
  ...process.env,
  BOOKING_API_BASE_URL: "http://127.0.0.1:9/api/v2",
  BOOKING_API_TOKEN: "tok",
  BOOKING_DB_PATH: db,
  LOG_LEVEL: "info",
});

// sync stands for the writers (backfill and reconcile open the store the same way), status for readers.
const COMMANDS = [["sync"], ["migrate"], ["status"]];

describe("--db that cannot be the mirror's file", () => {
  it.each(COMMANDS)("%s: an existing folder", async (command) => {
    const folder = join(dir, "data");
    mkdirSync(folder);
    const r = await runCli([command as string], env(folder));
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      `booking-sync: database ${folder} is a folder, not a file\n` +
        `Try: point --db or BOOKING_DB_PATH at a file, e.g. --db ${join(folder, "bookings.db")}\n`,
    );
    expect(statSync(folder).isDirectory()).toBe(true);
  });

  it.each(COMMANDS)(
    "%s: an existing file that is not a SQLite database is left untouched",
    async (command) => {
      const passwd = join(dir, "passwd");
      const text = "root:x:0:0:root:/root:/bin/bash\n";
      writeFileSync(passwd, text);
      const r = await runCli([command as string], env(passwd));
      expect(r.code).toBe(2);
      expect(r.stderr).toBe(
        `booking-sync: database ${passwd} is not a SQLite database: the file holds something else\n` +
          "Try: point --db or BOOKING_DB_PATH at the mirror's file, or at a path where no file exists yet to create one\n",
      );
      expect(readFileSync(passwd, "utf8")).toBe(text);
      expect(() => statSync(`${passwd}-wal`)).toThrow(/ENOENT/);
    },
  );

  it.each(COMMANDS)("%s: a path under a file (ENOTDIR)", async (command) => {
    const file = join(dir, "notes.txt");
    writeFileSync(file, "x");
    const db = join(file, "sub", "bookings.db");
    const r = await runCli([command as string], env(db));
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      `booking-sync: database ${db} cannot be opened: ${file} is a file, not a folder\n` +
        `Try: point --db or BOOKING_DB_PATH at a file in a folder, e.g. --db ${join(dir, "bookings.db")}\n`,
    );
    expect(r.stderr).not.toContain("ENOTDIR");
  });

  it("an empty file and a real mirror are still accepted", async () => {
    const empty = join(dir, "empty.db");
    writeFileSync(empty, "");
    expect((await runCli(["migrate"], env(empty))).code).toBe(0);
    const mirror = join(dir, "mirror.db");
    openStore(mirror).close();
    const r = await runCli(["status"], env(mirror));
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
  });
});
