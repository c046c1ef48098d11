/**
 * docs/queries.md's ways in name the file the demo writes, and the offline one works: a newcomer who
 * pastes a command after `npm run demo` must reach the mirror, not an empty file made on the spot.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { basename, join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../src/config/config.js";
import { openStore } from "../src/store/index.js";
import { tempDir } from "./support/store-fixtures.js";

const root = join(import.meta.dirname, "..");
const read = (path: string) => readFileSync(join(root, path), "utf8");
const QUERIES = read("docs/queries.md");
/** The file `npm run demo` writes, as src/demo.ts names it. */
const DEMO_DB = /const DB = "\.\/(data\/[^"]+\.db)"/.exec(read("src/demo.ts"))?.[1];
/** The default mirror, as the config resolves it. */
const DEFAULT_DB = loadConfig({ env: {} }).dbPath.replace(/^\.\//, "");
const hasSqlite3 = spawnSync("sqlite3", ["-version"]).status === 0;

describe("docs/queries.md", () => {
  it("opens the demo's file in each command, and names only files the product writes", () => {
    expect(DEMO_DB).toBe("data/demo.db");
    const opened = [
      ...QUERIES.matchAll(/(?:sqlite3 -readonly|ATTACH '|datasette) ?(data\/[\w.-]+\.db)/g),
    ].map((m) => m[1]);
    expect(opened).toEqual([DEMO_DB, DEMO_DB, DEMO_DB]);
    const named = new Set([...QUERIES.matchAll(/data\/[\w.-]+\.db/g)].map((m) => m[0]));
    expect([...named].sort()).toEqual([DEFAULT_DB, DEMO_DB].sort());
    expect(QUERIES).toContain("INSTALL sqlite");
    expect(QUERIES).toMatch(/downloads that extension/);
  });

  it("gives Datasette's metadata a database named after each of those files", () => {
    const metadata = JSON.parse(read("docs/datasette-metadata.json")) as {
      databases: Record<string, unknown>;
    };
    for (const file of [DEMO_DB as string, DEFAULT_DB])
      expect(Object.keys(metadata.databases)).toContain(basename(file, ".db"));
  });

  it.skipIf(!hasSqlite3)("the offline route, sqlite3 -readonly, reads a mirror and never makes one", () => {
    const tmp = tempDir();
    try {
      const db = tmp.file("demo.db");
      openStore(db).close();
      const count = execFileSync("sqlite3", ["-readonly", db, "SELECT count(*) FROM bookings_v"], {
        encoding: "utf8",
      });
      expect(count.trim()).toBe("0");
      const missing = tmp.file("typo.db");
      const r = spawnSync("sqlite3", ["-readonly", missing, "SELECT 1"], { encoding: "utf8" });
      expect(r.status).not.toBe(0);
      expect(existsSync(missing)).toBe(false);
    } finally {
      tmp.cleanup();
    }
  });
});
