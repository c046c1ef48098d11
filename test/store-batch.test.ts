/**
 * The store's one batching rule (store/batch.ts), through real files: saved pages become visible
 * to other connections together with their progress, by count, by age, before any other write, and
 * at close; a page that fails is undone alone; a process killed mid-batch leaves the last commit.
 */
import { spawnSync } from "node:child_process";
import { pathToFileURL } from "node:url";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { openStore, type Store } from "../src/store/index.js";
import { feedBatch, okSummary, summaryRaw, tempDir } from "./support/store-fixtures.js";

const T1 = "2026-01-01T00:00:00.000Z";

let tmp: ReturnType<typeof tempDir>;
let store: Store | undefined;
let reader: Database.Database | undefined;
beforeEach(() => {
  tmp = tempDir();
});
afterEach(() => {
  reader?.close();
  store?.close();
  reader = undefined;
  store = undefined;
  tmp.cleanup();
});

/** What another connection sees: the bookings and the `feed` stream's saved progress. */
function seen(): { ids: string[]; pages: number | null } {
  reader ??= new Database(tmp.file(), { readonly: true });
  const db = reader;
  const ids = (db.prepare("SELECT id FROM bookings ORDER BY id").all() as Array<{ id: string }>).map(
    (r) => r.id,
  );
  const state = db.prepare("SELECT progress_json AS p FROM sync_state WHERE stream = 'feed'").get() as
    | { p: string | null }
    | undefined;
  return { ids, pages: state?.p ? (JSON.parse(state.p) as { pages: number }).pages : null };
}

/** Page `i`: booking `i`, and progress saying `i` pages were read. */
function page(i: number) {
  const walk = {
    startedAt: T1,
    floor: null,
    upTo: null,
    anchor: null,
    fallback: null,
    top: null,
    pages: i,
  };
  return feedBatch([okSummary(summaryRaw(i))], T1, { walk });
}

const id = (i: number) => `bk${String(i).padStart(6, "0")}`;

describe("the batching rule", () => {
  it("commits every `pages` pages, rows and progress together", () => {
    const s = openStore(tmp.file(), { batch: { pages: 3, ms: 3_600_000 } });
    store = s;
    s.save(page(1));
    s.save(page(2));
    expect(seen()).toEqual({ ids: [], pages: null });
    s.save(page(3));
    expect(seen()).toEqual({ ids: [id(1), id(2), id(3)], pages: 3 });
    s.save(page(4));
    expect(seen().pages).toBe(3);
  });

  it("commits a page once it has waited `ms`, with no further page", async () => {
    const s = openStore(tmp.file(), { batch: { pages: 100, ms: 30 } });
    store = s;
    s.save(page(1));
    expect(seen().ids).toEqual([]);
    await vi.waitFor(() => expect(seen()).toEqual({ ids: [id(1)], pages: 1 }), { timeout: 5000 });
    expect(s.db.inTransaction).toBe(false);
  });

  it("commits the saved pages before any other write, and at close", () => {
    const s = openStore(tmp.file(), { batch: { pages: 100, ms: 3_600_000 } });
    store = s;
    s.save(page(1));
    const run = s.startRun({ kind: "sync", stream: "feed", startedAt: T1, checkpointBefore: null });
    expect(seen().ids).toEqual([id(1)]);
    s.save(page(2));
    s.finishRun(run, {
      status: "success",
      finishedAt: T1,
      checkpointAfter: null,
      error: null,
      pages: 2,
      requests: 2,
      retries: 0,
      inserted: 2,
      updated: 0,
      unchanged: 0,
      rejected: 0,
    });
    expect(seen()).toEqual({ ids: [id(1), id(2)], pages: 2 });
    s.save(page(3));
    s.close();
    expect(seen()).toEqual({ ids: [id(1), id(2), id(3)], pages: 3 });
  });

  it("undoes a page that fails alone: the pages before it in the batch commit", () => {
    const s = openStore(tmp.file(), { batch: { pages: 100, ms: 3_600_000 } });
    store = s;
    s.db.exec(`CREATE TRIGGER refuse BEFORE INSERT ON bookings WHEN NEW.id = '${id(2)}'
      BEGIN SELECT RAISE(ABORT, 'disk says no'); END`);
    s.save(page(1));
    expect(() => s.save(feedBatch([okSummary(summaryRaw(3)), okSummary(summaryRaw(2))], T1))).toThrow(
      /disk says no/,
    );
    s.flush();
    expect(seen()).toEqual({ ids: [id(1)], pages: 1 });
  });
});

describe("a commit that fails", () => {
  /** A booking that breaks a deferred foreign key: SQLite refuses the COMMIT of its transaction. */
  const dangle = (s: Store, i: number) =>
    s.db.exec(`CREATE TABLE dangling (ref TEXT REFERENCES bookings(id) DEFERRABLE INITIALLY DEFERRED);
      CREATE TRIGGER dangle AFTER INSERT ON bookings WHEN NEW.id = '${id(i)}'
      BEGIN INSERT INTO dangling VALUES ('nobody'); END`);
  const start = (s: Store) =>
    s.startRun({ kind: "sync", stream: "feed", startedAt: T1, checkpointBefore: null });

  it("loses its pages and takes none until the next run: their progress would count them", () => {
    const s = openStore(tmp.file(), { batch: { pages: 2, ms: 3_600_000 } });
    store = s;
    dangle(s, 2);
    s.save(page(1));
    expect(() => s.save(page(2))).toThrow(/not committed/);
    expect(() => s.save(page(3))).toThrow(/not committed/);
    expect(() => s.flush()).toThrow(/not committed/);
    expect(s.db.inTransaction).toBe(false);
    expect(seen()).toEqual({ ids: [], pages: null });
    s.db.exec("DROP TRIGGER dangle");
    start(s);
    s.save(page(3));
    s.flush();
    expect(seen()).toEqual({ ids: [id(3)], pages: 3 });
  });

  it("in the background, after `ms`, is thrown by the next page", async () => {
    const s = openStore(tmp.file(), { batch: { pages: 100, ms: 20 } });
    store = s;
    dangle(s, 1);
    s.save(page(1));
    await vi.waitFor(() => expect(s.db.inTransaction).toBe(false), { timeout: 5000 });
    expect(() => s.save(page(2))).toThrow(/not committed/);
    expect(seen()).toEqual({ ids: [], pages: null });
  });
});

describe("a process killed in the middle of a batch", () => {
  it("leaves the file as its last commit left it: every page there has its progress, none after", () => {
    const file = tmp.file();
    openStore(file).close();
    const fixtures = pathToFileURL(`${process.cwd()}/test/support/store-fixtures.ts`).href;
    const open = pathToFileURL(`${process.cwd()}/src/store/index.ts`).href;
    // Saves 7 pages, 3 to a batch, then dies without a chance to commit the seventh.
    const script = `
      import { openStore } from ${JSON.stringify(open)};
      import { feedBatch, okSummary, summaryRaw } from ${JSON.stringify(fixtures)};
      const store = openStore(${JSON.stringify(file)}, { batch: { pages: 3, ms: 3600000 } });
      for (let i = 1; i <= 7; i++) {
        const walk = { startedAt: "${T1}", floor: null, upTo: null, anchor: null, fallback: null, top: null, pages: i };
        store.save(feedBatch([okSummary(summaryRaw(i))], "${T1}", { walk }));
      }
      process.kill(process.pid, "SIGKILL");`;
    const child = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
      encoding: "utf8",
    });
    expect(child.signal, child.stderr).toBe("SIGKILL");
    expect(seen()).toEqual({ ids: [1, 2, 3, 4, 5, 6].map(id), pages: 6 });
  });
});
