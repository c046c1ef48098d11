/**
 * Readers are never blocked (invariant 5), not even at the moments the store opens and closes: a
 * reader in another process, connecting afresh for every query and without a busy timeout, as an
 * analyst's `sqlite3` shell does, reads on while a sync's store is opened, written and closed over
 * and over, and never meets a lock the store takes ("database is locked").
 */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openStore } from "../src/store/index.js";
import { feedBatch, okSummary, summaryRaw, tempDir } from "./support/store-fixtures.js";

const BETTER_SQLITE3 = pathToFileURL(createRequire(import.meta.url).resolve("better-sqlite3")).href;

/**
 * Reads in a loop until told to stop, each read on a new connection with no busy timeout. Answers
 * each `ping` after its next read, so the test knows the reader is running between two cycles.
 */
const READER = `
  import Database from ${JSON.stringify(BETTER_SQLITE3)};
  const file = process.argv[1];
  let reads = 0;
  let stop = false;
  const failures = [];
  const pings = [];
  process.on("message", (m) => (m === "stop" ? (stop = true) : pings.push(m)));
  const loop = () => {
    let db;
    try {
      db = new Database(file, { timeout: 0 });
      db.prepare("SELECT count(*) FROM bookings").get();
      reads++;
    } catch (err) {
      failures.push(err.code + ": " + err.message);
    } finally {
      db?.close();
    }
    for (const ping of pings.splice(0)) process.send({ ping, reads });
    if (stop) process.send({ reads, failures }, () => process.exit(0));
    else setImmediate(loop);
  };
  loop();
`;

interface ReaderProcess {
  /** Resolves after the reader's next read. */
  ping(): Promise<void>;
  /** Stops the reader; its count of reads and the errors it saw. */
  stop(): Promise<{ reads: number; failures: string[] }>;
}

let tmp: ReturnType<typeof tempDir>;
let child: ChildProcess | undefined;
beforeEach(() => {
  tmp = tempDir();
});
afterEach(async () => {
  if (child && child.exitCode === null && child.signalCode === null) {
    child.kill("SIGKILL");
    await once(child, "exit");
  }
  child = undefined;
  tmp.cleanup();
});

function startReader(file: string): ReaderProcess {
  const proc = spawn(process.execPath, ["--input-type=module", "-e", READER, file], {
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  child = proc;
  let n = 0;
  const reply = <T>(match: (m: Record<string, unknown>) => boolean) =>
    new Promise<T>((resolve, reject) => {
      const onMessage = (m: Record<string, unknown>) => {
        if (!match(m)) return;
        proc.off("message", onMessage);
        proc.off("exit", onExit);
        resolve(m as T);
      };
      const onExit = (code: number | null) => reject(new Error(`reader exited with code ${code}`));
      proc.on("message", onMessage);
      proc.once("exit", onExit);
    });
  return {
    async ping() {
      const id = ++n;
      const answered = reply((m) => m.ping === id);
      proc.send(id);
      await answered;
    },
    async stop() {
      const done = reply<{ reads: number; failures: string[] }>((m) => "failures" in m);
      proc.send("stop");
      return done;
    },
  };
}

const finish = {
  status: "success",
  checkpointAfter: null,
  error: null,
  pages: 1,
  requests: 1,
  retries: 0,
  inserted: 1,
  updated: 0,
  unchanged: 0,
  rejected: 0,
} as const;

describe("a reader without a busy timeout", () => {
  it("meets none of the store's locks while a sync's store is opened, written and closed 50 times", async () => {
    const file = tmp.file("mirror.db");
    openStore(file).close();
    const reader = startReader(file);
    await reader.ping();
    for (let i = 1; i <= 50; i++) {
      // As `sync` does: the run's row, a page saved (committed by `close` on every other round, as
      // a stopped run's last pages are; by the run's end the others).
      const store = openStore(file);
      const at = new Date(Date.UTC(2025, 0, 1, 0, 0, i)).toISOString();
      const run = store.startRun({ kind: "sync", stream: "feed", startedAt: at, checkpointBefore: null });
      store.save(feedBatch([okSummary(summaryRaw(i))], at));
      if (i % 2 === 0) store.finishRun(run, { ...finish, finishedAt: at });
      store.close();
      await reader.ping();
    }
    const { reads, failures } = await reader.stop();
    // SQLITE_BUSY_RECOVERY is SQLite's own, not the store's: the first connection to open the file
    // rebuilds the WAL's index, and a reader starting in those microseconds is refused. Any first
    // connection does it (the analyst's other shells too); the store leaves it an empty WAL.
    expect(failures.filter((f) => !f.startsWith("SQLITE_BUSY_RECOVERY:"))).toEqual([]);
    expect(reads).toBeGreaterThan(50);
  });
});
