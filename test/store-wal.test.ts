/**
 * The WAL a finished run leaves beside a SQLite mirror: a run that leaves more than 4 MiB
 * checkpoints it into the file and truncates it, unless a reader's snapshot still needs it.
 */
import fs from "node:fs";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { openStore, type Store } from "../src/store/index.js";
import type { RunFinish } from "../src/sync/ports.js";
import { fullRaw, listBatch, okFull, storeEachTest, type TempDir } from "./support/store-fixtures.js";

let tmp: TempDir;
let store: Store;
storeEachTest((s, t) => {
  store = s;
  tmp = t;
});

const T = "2025-02-01T00:00:00.000Z";
const FOUR_MIB = 4 * 1024 * 1024;
const walBytes = () => fs.statSync(`${tmp.file()}-wal`).size;

/** Saves `pages` list pages of 100 bookings from booking `from` on into `into`, and commits them. */
function savePages(from: number, pages: number, into: Store = store): void {
  for (let p = 0; p < pages; p++) {
    const records = Array.from({ length: 100 }, (_, i) => okFull(fullRaw(from + p * 100 + i)));
    into.save(listBatch(records, T));
  }
  into.flush();
}

const counts = { inserted: 0, updated: 0, unchanged: 0, rejected: 0, pages: 0, requests: 0, retries: 0 };
const finished: RunFinish = {
  ...counts,
  status: "success",
  finishedAt: T,
  checkpointAfter: null,
  error: null,
};

/** A run of `work`, ended as a success; returns the run's id. */
function run(work: () => void): number {
  const id = store.startRun({ kind: "sync", stream: "feed", startedAt: T, checkpointBefore: null });
  work();
  store.finishRun(id, finished);
  return id;
}

const statusOf = (id: number) =>
  (store.db.prepare("SELECT status FROM sync_runs WHERE id = ?").get(id) as { status: string }).status;

describe("the WAL a run leaves", () => {
  it("over 4 MiB at a run's end, is checkpointed into the file and truncated", () => {
    let before = 0;
    run(() => {
      savePages(0, 20);
      before = walBytes();
    });
    expect(before).toBeGreaterThan(FOUR_MIB);
    expect(walBytes()).toBe(0);
    const reader = new Database(tmp.file(), { readonly: true });
    try {
      expect(reader.prepare("SELECT count(detail_json) AS n FROM bookings").get()).toEqual({ n: 2000 });
    } finally {
      reader.close();
    }
  });

  it("under 4 MiB, is left as it is", () => {
    run(() => savePages(0, 1));
    const after = walBytes();
    expect(after).toBeGreaterThan(0);
    expect(after).toBeLessThanOrEqual(FOUR_MIB);
  });

  it("is left for a later run while a reader's snapshot needs part of it", () => {
    run(() => savePages(0, 1));
    const reader = new Database(tmp.file(), { readonly: true });
    try {
      reader.exec("BEGIN");
      expect(reader.prepare("SELECT count(*) AS n FROM bookings").get()).toEqual({ n: 100 });
      const id = run(() => savePages(100, 20));
      expect(statusOf(id)).toBe("success");
      expect(walBytes()).toBeGreaterThan(FOUR_MIB);
      // Later writes wait for a lock as before: the checkpoint's no-wait was its own.
      expect(store.db.pragma("busy_timeout", { simple: true })).toBe(5000);
      // The reader's snapshot is intact: it still sees the mirror as it began.
      expect(reader.prepare("SELECT count(*) AS n FROM bookings").get()).toEqual({ n: 100 });
      reader.exec("COMMIT");
    } finally {
      reader.close();
    }
    run(() => {});
    expect(walBytes()).toBe(0);
    expect(store.countBookings()).toBe(2100);
  });

  it("does not wait out the busy timeout for a reader, and says at debug level why it is left", () => {
    const file = tmp.file("logged.db");
    const said: string[] = [];
    const note = (_: object, msg?: string) => void said.push(msg ?? "");
    const logged = openStore(file, { logger: { debug: note, info: note, warn: note, error: note } });
    const reader = new Database(file, { readonly: true });
    try {
      reader.exec("BEGIN");
      reader.prepare("SELECT count(*) FROM bookings").get();
      const id = logged.startRun({ kind: "sync", stream: "feed", startedAt: T, checkpointBefore: null });
      savePages(0, 20, logged);
      const started = performance.now();
      logged.finishRun(id, finished);
      // The busy timeout is 5,000 ms: a checkpoint that waited for the reader would take that long.
      expect(performance.now() - started).toBeLessThan(4000);
      expect(said).toContain("a reader holds part of the WAL; a later run empties it");
    } finally {
      reader.close();
      logged.close();
    }
  });

  it("is emptied beside the file itself when the mirror is opened through a link", () => {
    const real = tmp.file("real.db");
    const link = tmp.file("link.db");
    fs.closeSync(fs.openSync(real, "w"));
    fs.symlinkSync(real, link);
    const linked = openStore(link);
    try {
      const id = linked.startRun({ kind: "sync", stream: "feed", startedAt: T, checkpointBefore: null });
      savePages(0, 20, linked);
      expect(fs.statSync(`${real}-wal`).size).toBeGreaterThan(FOUR_MIB);
      linked.finishRun(id, finished);
      expect(fs.statSync(`${real}-wal`).size).toBe(0);
    } finally {
      linked.close();
    }
  });
});
