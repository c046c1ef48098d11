/**
 * The SQLite store through real files: opening and migrating, the feed's summary upserts, stream
 * state, quarantine, runs, and readers running beside the writer.
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { openStore, type Store } from "../src/store/index.js";
import { applyPragmas } from "../src/store/pragmas.js";
import type { WalkProgress } from "../src/sync/ports.js";
import {
  at,
  feedBatch,
  okSummary,
  storeEachTest,
  summaryRaw,
  type TempDir,
} from "./support/store-fixtures.js";

let tmp: TempDir;
let store: Store;
storeEachTest((s, t) => {
  store = s;
  tmp = t;
});

const T1 = "2025-02-01T00:00:00.000Z";
const T2 = "2025-02-02T00:00:00.000Z";
const migrationsCount = (s: Store) =>
  (s.db.prepare("SELECT count(*) AS n FROM __drizzle_migrations").get() as { n: number }).n;
const row = (s: Store, id: string) =>
  s.db.prepare("SELECT * FROM bookings WHERE id = ?").get(id) as Record<string, unknown>;

describe("openStore", () => {
  it("creates the folder, applies every migration, and a second open applies nothing", () => {
    const file = path.join(tmp.dir, "nested", "deeper", "m.db");
    const first = openStore(file);
    const journal = JSON.parse(fs.readFileSync("drizzle/meta/_journal.json", "utf8")) as {
      entries: unknown[];
    };
    expect(migrationsCount(first)).toBe(journal.entries.length);
    first.save(feedBatch([okSummary(summaryRaw(1))], T1));
    first.close();
    const second = openStore(file);
    expect(migrationsCount(second)).toBe(journal.entries.length);
    expect(second.countBookings()).toBe(1);
    second.close();
  });

  it("runs in WAL mode with the agreed pragmas", () => {
    expect(store.db.pragma("journal_mode", { simple: true })).toBe("wal");
    expect(store.db.pragma("busy_timeout", { simple: true })).toBe(5000);
    expect(store.db.pragma("foreign_keys", { simple: true })).toBe(1);
    expect(store.db.pragma("synchronous", { simple: true })).toBe(1); // NORMAL
  });

  it("makes a new mirror with 16 KiB pages, checkpointing its WAL every 4,096 of them (64 MiB)", () => {
    expect(store.db.pragma("page_size", { simple: true })).toBe(16384);
    expect(store.db.pragma("wal_autocheckpoint", { simple: true })).toBe(4096);
  });

  it("keeps an existing mirror's 4 KiB pages, through a reopen and a VACUUM outside WAL mode, checkpointing every 16,384 (64 MiB)", () => {
    const file = tmp.file("made-before.db");
    const old = new Database(file);
    old.pragma("journal_mode = WAL");
    old.exec("CREATE TABLE t (x)");
    old.close();
    const reopened = openStore(file);
    expect(reopened.db.pragma("page_size", { simple: true })).toBe(4096);
    expect(reopened.db.pragma("wal_autocheckpoint", { simple: true })).toBe(16384);
    reopened.save(feedBatch([okSummary(summaryRaw(1))], T1));
    reopened.flush();
    expect(reopened.countBookings()).toBe(1);
    reopened.close();
    const raw = new Database(file);
    try {
      applyPragmas(raw, false);
      raw.pragma("journal_mode = DELETE");
      raw.exec("VACUUM");
      expect(raw.pragma("page_size", { simple: true })).toBe(4096);
    } finally {
      raw.close();
    }
  });

  it("opens read-only without writing, and names the path when the file is missing", () => {
    store.save(feedBatch([okSummary(summaryRaw(1))], T1));
    store.flush();
    const reader = openStore(tmp.file(), { readonly: true });
    expect(reader.countBookings()).toBe(1);
    expect(() => reader.save(feedBatch([okSummary(summaryRaw(2))], T1))).toThrow(/readonly/);
    reader.close();
    const missing = tmp.file("absent.db");
    expect(() => openStore(missing, { readonly: true })).toThrow(missing);
    expect(fs.existsSync(missing)).toBe(false);
  });

  it("has migrations that match schema.ts (drizzle-kit generate adds nothing)", () => {
    const work = path.join(tmp.dir, "gen");
    fs.cpSync("drizzle", path.join(work, "drizzle"), { recursive: true });
    const schema = path.relative(work, path.resolve("src/store/schema.ts"));
    const kit = path.resolve("node_modules/.bin/drizzle-kit");
    const out = spawnSync(
      kit,
      ["generate", "--dialect", "sqlite", "--schema", schema, "--out", "./drizzle"],
      {
        cwd: work,
        encoding: "utf8",
      },
    );
    expect(out.status, out.stderr).toBe(0);
    const list = (dir: string) => fs.readdirSync(dir, { recursive: true }).map(String).sort();
    expect(list(path.join(work, "drizzle"))).toEqual(list("drizzle"));
    for (const f of list("drizzle").filter((f) => f.includes("."))) {
      expect(fs.readFileSync(path.join(work, "drizzle", f), "utf8"), f).toBe(
        fs.readFileSync(path.join("drizzle", f), "utf8"),
      );
    }
  });
});

describe("save: feed pages", () => {
  it("counts new, changed and unchanged summaries and stamps only what changed", () => {
    const raws = [1, 2, 3].map((i) => summaryRaw(i));
    expect(store.save(feedBatch(raws.map(okSummary), T1))).toEqual({
      inserted: 3,
      updated: 0,
      unchanged: 0,
      rejected: 0,
    });
    const changed = { ...summaryRaw(2), paid: true, bookingState: 3 };
    const counts = store.save(
      feedBatch(
        [raws[0], changed, raws[2]].map((r) => okSummary(r ?? {})),
        T2,
      ),
    );
    expect(counts).toEqual({ inserted: 0, updated: 1, unchanged: 2, rejected: 0 });
    const r1 = row(store, "bk000001");
    const r2 = row(store, "bk000002");
    expect([r1.first_seen_at, r1.summary_synced_at]).toEqual([T1, T1]);
    expect([r2.first_seen_at, r2.summary_synced_at, r2.paid, r2.booking_state]).toEqual([T1, T2, 1, 3]);
    expect(JSON.parse(String(r2.summary_json))).toEqual(changed);
  });

  it("stores typed columns an analyst can query, money as the JSON number", () => {
    store.save(feedBatch([okSummary(summaryRaw(7, { totalAmount: 0.1 + 0.2 }))], T1));
    const r = row(store, "bk000007");
    expect(r).toMatchObject({
      search_id: "S7",
      source_platform: "web",
      created_at: at(7),
      booking_date: at(7),
      paid: 0,
      total_amount: 0.1 + 0.2,
      sender_name: "Chidi Eze",
      sender_email: null,
      receiver_country_code: "GB",
      booking_type: null,
      detail_json: null,
    });
  });

  it("accepts duplicate ids in one batch: the last copy wins", () => {
    const a = summaryRaw(1);
    const b = summaryRaw(1, { paid: true });
    const counts = store.save(feedBatch([okSummary(a), okSummary(b), okSummary(b)], T1));
    expect(counts).toEqual({ inserted: 1, updated: 1, unchanged: 1, rejected: 0 });
    expect(row(store, "bk000001").paid).toBe(1);
    expect(store.countBookings()).toBe(1);
  });

  it("sets booking_type from a type-scoped stream and keeps it when a batch has none", () => {
    store.save(feedBatch([okSummary(summaryRaw(1))], T1));
    expect(row(store, "bk000001").booking_type).toBeNull();
    const typed = store.save(feedBatch([okSummary(summaryRaw(1))], T2, { bookingType: "LC" }));
    expect(typed.unchanged).toBe(1);
    expect(row(store, "bk000001")).toMatchObject({ booking_type: "LC", summary_synced_at: T1 });
    store.save(feedBatch([okSummary(summaryRaw(1, { paid: true }))], T2));
    expect(row(store, "bk000001").booking_type).toBe("LC");
    expect(store.countBookings({ bookingType: "LC" })).toBe(1);
    expect(store.countBookings({ bookingType: "IN" })).toBe(0);
  });

  it("never moves the checkpoint backwards, and commits the walk's progress with the rows", () => {
    const walk: WalkProgress = {
      startedAt: T2,
      floor: null,
      upTo: at(5),
      anchor: null,
      fallback: null,
      top: at(9),
      pages: 3,
    };
    store.save(feedBatch([okSummary(summaryRaw(9))], T1, { walk }));
    expect(store.readStream("feed")).toEqual({ stream: "feed", checkpoint: null, walk });
    store.save(feedBatch([], T1, { walk: null, checkpoint: at(9) }));
    expect(store.readStream("feed")).toEqual({ stream: "feed", checkpoint: at(9), walk: null });
    store.save(feedBatch([], T2, { walk: null, checkpoint: at(4) }));
    expect(store.readStream("feed").checkpoint).toBe(at(9));
    store.save(feedBatch([], T2, { walk: null, checkpoint: at(12) }));
    expect(store.readStream("feed").checkpoint).toBe(at(12));
    expect(store.readStream("feed:IN")).toEqual({ stream: "feed:IN", checkpoint: null, walk: null });
  });

  it("quarantines rejects once, however often the same bad record is seen", () => {
    const bad = { _id: "x1", createdAt: "yesterday" };
    const reject = {
      ok: false as const,
      id: "x1",
      createdAt: null,
      reason: "createdAt: not an ISO 8601 timestamp",
      raw: bad,
    };
    const other = {
      ok: false as const,
      id: null,
      createdAt: null,
      reason: "(record): expected object",
      raw: 42,
    };
    const first = store.save(feedBatch([], T1, { rejects: [reject, reject, other] }));
    expect(first.rejected).toBe(3);
    store.save(feedBatch([], T2, { rejects: [{ ...reject, raw: { ...bad } }] }));
    const rows = store.db.prepare("SELECT * FROM rejected_records ORDER BY id").all() as Array<
      Record<string, unknown>
    >;
    expect(rows).toHaveLength(2);
    expect(rows[0]).toMatchObject({
      endpoint: "feed",
      booking_id: "x1",
      raw_json: JSON.stringify(bad),
      first_seen_at: T1,
    });
    expect(rows[1]).toMatchObject({ booking_id: null, raw_json: "42" });
  });

  it("rolls the whole batch back when any part fails", () => {
    const walk: WalkProgress = {
      startedAt: T1,
      floor: null,
      upTo: at(1),
      anchor: null,
      fallback: null,
      top: at(2),
      pages: 1,
    };
    const broken = { ...okSummary(summaryRaw(2)), id: null as unknown as string };
    expect(() => store.save(feedBatch([okSummary(summaryRaw(1)), broken], T1, { walk }))).toThrow();
    expect(store.countBookings()).toBe(0);
    expect(store.readStream("feed").walk).toBeNull();
  });
});

describe("readers beside the writer", () => {
  it("a second connection reads while a batch of pages is open, and sees it once committed", () => {
    store.save(feedBatch([okSummary(summaryRaw(1))], T1));
    store.flush();
    const reader = openStore(tmp.file(), { readonly: true });
    store.save(feedBatch([okSummary(summaryRaw(1, { paid: true })), okSummary(summaryRaw(2))], T2));
    try {
      expect(store.db.inTransaction).toBe(true);
      expect(reader.countBookings()).toBe(1);
      expect(reader.db.prepare("SELECT paid FROM bookings").get()).toEqual({ paid: 0 });
      store.flush();
      expect(reader.countBookings()).toBe(2);
    } finally {
      reader.close();
    }
  });

  it("the writer commits while a reader holds an open snapshot", () => {
    store.save(feedBatch([okSummary(summaryRaw(1))], T1));
    store.flush();
    const reader = openStore(tmp.file());
    reader.db.exec("BEGIN");
    try {
      expect(reader.countBookings()).toBe(1);
      // Without WAL this commit would wait for the reader and fail with "database is locked".
      const counts = store.save(feedBatch([okSummary(summaryRaw(2))], T2));
      store.flush();
      expect(counts.inserted).toBe(1);
      expect(reader.countBookings()).toBe(1);
    } finally {
      reader.db.exec("COMMIT");
    }
    expect(reader.countBookings()).toBe(2);
    reader.close();
  });
});
