/**
 * The store's one batching rule (store/batch.ts), through real databases and a clock the test moves:
 * on both backends, saved pages become visible to other connections together with their progress,
 * by count, `ms` after a transaction's first page, before any other write, and at close; a page that
 * fails loses its batch. On SQLite, a process killed mid-batch leaves the last commit
 * (PostgreSQL's differences: postgres-session.test.ts).
 */
import { spawnSync } from "node:child_process";
import { pathToFileURL } from "node:url";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { BatchRule } from "../src/store/batch.js";
import { openStore, type Store } from "../src/store/index.js";
import type { Mirror } from "../src/store/store.js";
import { fixedClock, type TestClock } from "./support/fakes.js";
import { type MirrorSql, mirrorSql, openBackendMirror } from "./support/mirror-harness.js";
import { describeBackends } from "./support/postgres.js";
import { feedBatch, okSummary, summaryRaw, tempDir } from "./support/store-fixtures.js";

const T1 = "2026-01-01T00:00:00.000Z";
const HOUR = 3_600_000;

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

/** The bookings and the `feed` stream's saved page count, as rows of another connection. */
type Seen = { ids: string[]; pages: number | null };
function seenIn(ids: Array<{ id: string }>, state: Array<{ p: string | null }>): Seen {
  const p = state[0]?.p;
  return { ids: ids.map((r) => r.id), pages: p ? (JSON.parse(p) as { pages: number }).pages : null };
}

describeBackends("the batching rule", ({ kind, url }) => {
  let mirror: Mirror | undefined;
  let sql: MirrorSql | undefined;
  let clock: TestClock;
  afterEach(async () => {
    await sql?.close();
    await mirror?.close();
    sql = undefined;
    mirror = undefined;
  });

  const open = async (batch: BatchRule): Promise<Mirror> => {
    const location = await url();
    clock = fixedClock(Date.parse(T1));
    mirror = await openBackendMirror(kind, location, { batch, clock });
    sql = mirrorSql(kind, location);
    return mirror;
  };
  /** What another connection sees. */
  const seen = async (): Promise<Seen> => {
    const q = sql?.query ?? (() => Promise.reject(new Error("no mirror open")));
    return seenIn(
      await q<{ id: string }>("SELECT id FROM bookings ORDER BY id"),
      await q<{ p: string | null }>("SELECT progress_json AS p FROM sync_state WHERE stream = 'feed'"),
    );
  };
  /** Moves the clock; PostgreSQL's commit then waits its turn on the writer's connection, as any read does. */
  const advance = async (ms: number) => {
    clock.advance(ms);
    await mirror?.countBookings();
  };

  it("commits every `pages` pages, rows and progress together", async () => {
    const m = await open({ pages: 3, ms: HOUR });
    await m.save(page(1));
    await m.save(page(2));
    expect(await seen()).toEqual({ ids: [], pages: null });
    await m.save(page(3));
    expect(await seen()).toEqual({ ids: [id(1), id(2), id(3)], pages: 3 });
    await m.save(page(4));
    expect((await seen()).pages).toBe(3);
  });

  it("commits a transaction `ms` after its first page, not before, with no further page", async () => {
    const m = await open({ pages: 100, ms: 1000 });
    await m.save(page(1));
    await advance(600);
    await m.save(page(2));
    await advance(399);
    expect(clock.pending()).toBe(1);
    expect(await seen()).toEqual({ ids: [], pages: null });
    await advance(1);
    expect(clock.pending()).toBe(0);
    expect(await seen()).toEqual({ ids: [id(1), id(2)], pages: 2 });
  });

  it("times each transaction from its own first page: a batch that filled stops its timer", async () => {
    const m = await open({ pages: 2, ms: 1000 });
    await m.save(page(1));
    await advance(600);
    await m.save(page(2));
    await m.save(page(3));
    // The first transaction's timer would be due now; the second's is 400 ms away.
    await advance(400);
    expect(await seen()).toEqual({ ids: [id(1), id(2)], pages: 2 });
    expect(clock.pending()).toBe(1);
    await advance(600);
    expect(await seen()).toEqual({ ids: [id(1), id(2), id(3)], pages: 3 });
  });

  it("commits the saved pages before any other write, and at close", async () => {
    const m = await open({ pages: 100, ms: HOUR });
    await m.save(page(1));
    const run = await m.startRun({ kind: "sync", stream: "feed", startedAt: T1, checkpointBefore: null });
    expect((await seen()).ids).toEqual([id(1)]);
    await m.save(page(2));
    await m.finishRun(run, {
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
    expect(await seen()).toEqual({ ids: [id(1), id(2)], pages: 2 });
    await m.save(page(3));
    await m.close();
    mirror = undefined;
    expect(await seen()).toEqual({ ids: [id(1), id(2), id(3)], pages: 3 });
    expect(clock.pending()).toBe(0);
  });
});

describe("SQLite's batch", () => {
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

  /** What another connection sees. */
  function seen(): Seen {
    reader ??= new Database(tmp.file(), { readonly: true });
    return seenIn(
      reader.prepare("SELECT id FROM bookings ORDER BY id").all() as Array<{ id: string }>,
      reader.prepare("SELECT progress_json AS p FROM sync_state WHERE stream = 'feed'").all() as Array<{
        p: string | null;
      }>,
    );
  }

  it("on the system clock, commits a saved page by itself `ms` later", async () => {
    const s = openStore(tmp.file(), { batch: { pages: 100, ms: 30 } });
    store = s;
    s.save(page(1));
    // The timer cannot have run within this turn of the event loop.
    expect(seen().ids).toEqual([]);
    await vi.waitFor(() => expect(seen()).toEqual({ ids: [id(1)], pages: 1 }), {
      timeout: 10_000,
      interval: 10,
    });
  });

  it("a page that fails takes its batch with it, half written or not, and none is taken until the next run", () => {
    const s = openStore(tmp.file(), { batch: { pages: 100, ms: HOUR } });
    store = s;
    s.db.exec(`CREATE TRIGGER refuse BEFORE INSERT ON bookings WHEN NEW.id = '${id(2)}'
      BEGIN SELECT RAISE(ABORT, 'disk says no'); END`);
    s.save(page(1));
    // Booking 3 is written before 2 is refused: nothing of the page, nor of the page before, stays.
    const refusal = (() => {
      try {
        s.save(feedBatch([okSummary(summaryRaw(3)), okSummary(summaryRaw(2))], T1));
      } catch (err) {
        return err as Error;
      }
    })();
    expect(refusal?.message).toMatch(/not committed/);
    expect(String((refusal?.cause as Error | undefined)?.message)).toMatch(/disk says no/);
    expect(s.db.inTransaction).toBe(false);
    expect(() => s.save(page(4))).toThrow(/not committed/);
    expect(() => s.flush()).toThrow(/not committed/);
    expect(seen()).toEqual({ ids: [], pages: null });
    s.db.exec("DROP TRIGGER refuse");
    s.startRun({ kind: "sync", stream: "feed", startedAt: T1, checkpointBefore: null });
    s.save(page(4));
    s.flush();
    expect(seen()).toEqual({ ids: [id(4)], pages: 4 });
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

    it("in the background, after `ms`, is thrown by the next page", () => {
      const clock = fixedClock(Date.parse(T1));
      const s = openStore(tmp.file(), { batch: { pages: 100, ms: 20 }, clock });
      store = s;
      dangle(s, 1);
      s.save(page(1));
      clock.advance(19);
      expect(s.db.inTransaction).toBe(true);
      clock.advance(1);
      expect(s.db.inTransaction).toBe(false);
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
});
