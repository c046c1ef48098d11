/**
 * The full view in the SQLite store: detail upserts with the stale-write guard, packages and items,
 * the details queue, and reconcile's missing marks, all through real files.
 */
import { describe, expect, expectTypeOf, it } from "vitest";
import type { Store } from "../src/store/index.js";
import type { SyncStore } from "../src/sync/ports.js";
import {
  at,
  feedBatch,
  fullRaw,
  listBatch,
  okFull,
  okSummary,
  storeEachTest,
  summaryRaw,
} from "./support/store-fixtures.js";

let store: Store;
storeEachTest((s) => {
  store = s;
});

const T1 = "2025-02-01T00:00:00.000Z";
const T2 = "2025-02-02T00:00:00.000Z";
const T3 = "2025-02-03T00:00:00.000Z";
const row = (id: string) =>
  store.db.prepare("SELECT * FROM bookings WHERE id = ?").get(id) as Record<string, unknown>;
const children = (id: string) => ({
  packages: store.db
    .prepare(
      "SELECT position, package_id, actual_weight, length FROM booking_packages WHERE booking_id = ? ORDER BY 1",
    )
    .all(id),
  items: store.db
    .prepare(
      "SELECT package_position AS p, position AS i, item_id, hs_code, exclude_packing_list AS x FROM booking_items WHERE booking_id = ? ORDER BY 1, 2",
    )
    .all(id),
});
const details = (raws: Array<Record<string, unknown>>, syncedAt: string, listedBy?: number) =>
  store.save({ source: "list", records: raws.map(okFull), rejects: [], syncedAt, listedBy });

describe("save: list pages", () => {
  it("stores every typed column, the raw record, and its packages and items", () => {
    expect(details([fullRaw(1)], T1)).toEqual({ inserted: 1, updated: 0, unchanged: 0, rejected: 0 });
    expect(row("bk000001")).toMatchObject({
      booking_type: "IN",
      sender_email: "chidi@example.com",
      summary_json: null,
      first_seen_at: T1,
      detail_synced_at: T1,
      remote_updated_at: at(101),
      sub_total: 14000,
      insurance_type: "BASIC",
      insurance_fee: 184.57,
      fuel_surcharge_amount: 280,
      packaging_fee_amount: 500,
      collection_type: "PICKUP",
      pickup_date: "2025-01-02T09:00:00.000Z",
      pickup_time_from: "9:00 AM",
      source_name: "Acme Exports",
      customer_acceptance_state: 2,
    });
    expect(JSON.parse(String(row("bk000001").detail_json))).toEqual(fullRaw(1));
    expect(children("bk000001")).toEqual({
      packages: [
        { position: 0, package_id: "pk1-0", actual_weight: 1.5, length: 30 },
        { position: 1, package_id: "pk1-1", actual_weight: 1, length: null },
      ],
      items: [
        { p: 0, i: 0, item_id: "it1-1", hs_code: "6109.10", x: 0 },
        { p: 0, i: 1, item_id: "it1-2", hs_code: "4202.22", x: 1 },
        { p: 1, i: 0, item_id: "it1-3", hs_code: "8517.12", x: 0 },
      ],
    });
  });

  it("stores every field a record arrived with, unknown ones included, in either view", () => {
    const full = fullRaw(1, { newField: { nested: [1, "é"] } });
    const summary = summaryRaw(2, { newField: "kept" });
    store.save(listBatch([okFull(full)], T1));
    store.save(feedBatch([okSummary(summary)], T1));
    expect(JSON.parse(String(row("bk000001").detail_json))).toEqual(full);
    expect(JSON.parse(String(row("bk000002").summary_json))).toEqual(summary);
  });

  it("counts a record stored in another spelling (as earlier releases wrote it) as unchanged, and stores the text served", () => {
    const full = fullRaw(1, { branchName: "Café" });
    const summary = summaryRaw(2, { searchId: "Café" });
    expect(details([full], T1)).toMatchObject({ inserted: 1 });
    store.save(feedBatch([okSummary(summary)], T1));
    const escaped = (v: unknown) => JSON.stringify(v, null, 2).replace(/é/g, "\\u00e9");
    store.db.prepare("UPDATE bookings SET detail_json = ? WHERE id = ?").run(escaped(full), "bk000001");
    store.db.prepare("UPDATE bookings SET summary_json = ? WHERE id = ?").run(escaped(summary), "bk000002");
    expect(store.save(listBatch([okFull(full)], T2))).toMatchObject({
      inserted: 0,
      updated: 0,
      unchanged: 1,
    });
    expect(store.save(feedBatch([okSummary(summary)], T2))).toMatchObject({ updated: 0, unchanged: 1 });
    // The text follows the source's spelling; nothing else of the row moves, and no change is recorded.
    expect(row("bk000001")).toMatchObject({ detail_json: JSON.stringify(full), detail_synced_at: T1 });
    expect(row("bk000002")).toMatchObject({ summary_json: JSON.stringify(summary), summary_synced_at: T1 });
    expect(store.db.prepare("SELECT count(*) AS n FROM booking_changes").get()).toEqual({ n: 0 });
    // A changed value is still a change.
    const paid = { ...full, paid: !full.paid };
    expect(store.save(listBatch([okFull(paid)], T3))).toMatchObject({ updated: 1 });
  });

  it("skips a payload older than the stored one, and one identical to it", () => {
    details([fullRaw(1, { updatedAt: at(200), paid: true })], T1);
    const older = details([fullRaw(1, { updatedAt: at(150), paid: false })], T2);
    expect(older).toEqual({ inserted: 0, updated: 0, unchanged: 1, rejected: 0 });
    expect(row("bk000001")).toMatchObject({ paid: 1, remote_updated_at: at(200), detail_synced_at: T1 });
    expect(details([fullRaw(1, { updatedAt: at(200), paid: true })], T2).unchanged).toBe(1);
    const newer = details([fullRaw(1, { updatedAt: at(300), paid: false })], T3);
    expect(newer.updated).toBe(1);
    expect(row("bk000001")).toMatchObject({ paid: 0, remote_updated_at: at(300), detail_synced_at: T3 });
  });

  it("replaces packages and items when the details change", () => {
    details([fullRaw(1)], T1);
    const one = {
      packages: [{ actualWeight: 4, _id: "pk-new", items: [{ hsCode: "0901.21", _id: "it-new" }] }],
    };
    expect(details([fullRaw(1, { packages: one, updatedAt: at(500) })], T2).updated).toBe(1);
    expect(children("bk000001")).toEqual({
      packages: [{ position: 0, package_id: "pk-new", actual_weight: 4, length: null }],
      items: [{ p: 0, i: 0, item_id: "it-new", hs_code: "0901.21", x: null }],
    });
  });

  it("of one _id twice in a page, stores the last copy's packages and items only", () => {
    details([fullRaw(2)], T1);
    const one = (id: string) => ({
      packages: [{ _id: id, items: [{ hsCode: "0901.21", _id: `it-${id}` }] }],
    });
    const page = [
      fullRaw(1),
      fullRaw(1, { packages: one("pk-a"), updatedAt: at(500) }),
      fullRaw(2, { packages: one("pk-b"), updatedAt: at(500) }),
      fullRaw(2, { packages: one("pk-c"), updatedAt: at(600) }),
    ];
    expect(details(page, T2)).toEqual({ inserted: 1, updated: 3, unchanged: 0, rejected: 0 });
    for (const [id, pk] of [
      ["bk000001", "pk-a"],
      ["bk000002", "pk-c"],
    ])
      expect(children(id as string)).toEqual({
        packages: [{ position: 0, package_id: pk, actual_weight: null, length: null }],
        items: [{ p: 0, i: 0, item_id: `it-${pk}`, hs_code: "0901.21", x: null }],
      });
  });

  it("stores a page of more children than one statement takes", () => {
    const items = Array.from({ length: 150 }, (_, i) => ({ _id: `it-${i}`, quantity: i }));
    const packages = Array.from({ length: 70 }, (_, i) => ({ _id: `pk-${i}`, items: i === 0 ? items : [] }));
    expect(details([fullRaw(1, { packages: { packages } }), fullRaw(2)], T1).inserted).toBe(2);
    const count = (table: string) =>
      (
        store.db.prepare(`SELECT count(*) AS n FROM ${table} WHERE booking_id = 'bk000001'`).get() as {
          n: number;
        }
      ).n;
    expect([count("booking_packages"), count("booking_items")]).toEqual([70, 150]);
    expect(children("bk000002").items).toHaveLength(3);
  });

  it("deletes children with their booking (foreign keys on)", () => {
    details([fullRaw(1)], T1);
    store.db.prepare("DELETE FROM bookings WHERE id = ?").run("bk000001");
    expect(children("bk000001")).toEqual({ packages: [], items: [] });
  });

  it("commits progress and list rejects with the rows", () => {
    const runId = store.startRun({
      kind: "backfill",
      stream: "backfill",
      startedAt: T1,
      checkpointBefore: null,
    });
    const reject = {
      ok: false as const,
      id: "bad",
      createdAt: null,
      reason: "paid: expected boolean",
      raw: { _id: "bad" },
    };
    const counts = store.save({
      source: "list",
      records: [okFull(fullRaw(1))],
      rejects: [reject],
      syncedAt: T1,
      listedBy: runId,
      progress: { stream: "backfill", value: { page: 7 }, checkpoint: at(1) },
    });
    expect(counts).toEqual({ inserted: 1, updated: 0, unchanged: 0, rejected: 1 });
    expect(store.readProgress<{ page: number }>("backfill")).toEqual({
      checkpoint: at(1),
      progress: { page: 7 },
    });
    expect(store.db.prepare("SELECT run_id, endpoint FROM rejected_records").get()).toEqual({
      run_id: runId,
      endpoint: "list",
    });
    store.save({
      source: "list",
      records: [],
      rejects: [],
      syncedAt: T2,
      progress: { stream: "backfill", value: null },
    });
    expect(store.readProgress("backfill")).toEqual({ checkpoint: at(1), progress: null });
  });
});

describe("summaries and details together", () => {
  it("a summary write keeps the detail columns and the sender email the full view gave", () => {
    details([fullRaw(1)], T1);
    const counts = store.save(feedBatch([okSummary(summaryRaw(1, { paid: true }))], T2));
    expect(counts).toEqual({ inserted: 0, updated: 1, unchanged: 0, rejected: 0 });
    expect(row("bk000001")).toMatchObject({
      paid: 1,
      summary_synced_at: T2,
      sender_email: "chidi@example.com",
      booking_type: "IN",
      detail_synced_at: T1,
      sub_total: 14000,
      remote_updated_at: at(101),
    });
    expect(JSON.parse(String(row("bk000001").detail_json))).toEqual(fullRaw(1));
    expect(children("bk000001").items).toHaveLength(3);
  });

  it("queues bookings without details, or whose summary changed after them, newest first", () => {
    store.save(
      feedBatch(
        [1, 2, 3].map((i) => okSummary(summaryRaw(i))),
        T1,
      ),
    );
    expect(store.bookingsNeedingDetails(10, T1).map((b) => b.id)).toEqual([
      "bk000003",
      "bk000002",
      "bk000001",
    ]);
    expect(store.bookingsNeedingDetails(1, T1)).toEqual([{ id: "bk000003", createdAt: at(3), misses: 0 }]);
    details([fullRaw(1), fullRaw(2)], T2);
    expect(store.bookingsNeedingDetails(10, T1).map((b) => b.id)).toEqual(["bk000003"]);
    store.save(feedBatch([okSummary(summaryRaw(1, { bookingState: 4 }))], T3));
    expect(store.bookingsNeedingDetails(10, T1).map((b) => b.id)).toEqual(["bk000003", "bk000001"]);
    const plan = store.db
      .prepare(
        "EXPLAIN QUERY PLAN SELECT id FROM bookings WHERE (detail_synced_at IS NULL OR summary_synced_at > detail_synced_at) AND missing_since IS NULL ORDER BY created_at DESC LIMIT 5",
      )
      .all() as Array<{ detail: string }>;
    expect(plan.map((p) => p.detail).join(" ")).toContain("bookings_needing_details_idx");
  });
});

describe("putOffDetails", () => {
  it("puts off bookings a details pass did not find until the time it says, counting misses until details are read", () => {
    store.save(
      feedBatch(
        [1, 2, 3].map((i) => okSummary(summaryRaw(i))),
        T1,
      ),
    );
    details([fullRaw(1)], T2);
    const ids = (...n: number[]) => n.map((i) => `bk00000${i}`);
    const needing = (now: string) => store.bookingsNeedingDetails(10, now).map((b) => `${b.id}:${b.misses}`);
    expect(needing(T1)).toEqual(["bk000003:0", "bk000002:0"]);
    // Booking 1 has its details now: only the two still without them are put off.
    expect(store.putOffDetails({ ids: ids(1, 2, 3), misses: 1, seekAfter: T3 })).toBe(2);
    expect([1, 2, 3].map((i) => row(`bk00000${i}`).details_seek_after)).toEqual([null, T3, T3]);
    expect(needing(T2)).toEqual([]);
    expect(row("bk000002").missing_since).toBeNull();
    // At T3 they are sought again, their misses counted.
    expect(needing(T3)).toEqual(["bk000003:1", "bk000002:1"]);
    // Details read clear the count and the put-off; a changed summary clears the put-off only.
    store.putOffDetails({ ids: ids(2, 3), misses: 2, seekAfter: "2025-03-01T00:00:00.000Z" });
    details([fullRaw(3)], T3);
    store.save(feedBatch([okSummary(summaryRaw(2, { bookingState: 4 }))], T3));
    const T4 = "2025-02-04T00:00:00.000Z";
    store.save(feedBatch([okSummary(summaryRaw(3, { bookingState: 4 }))], T4));
    expect(needing(T3)).toEqual(["bk000003:0", "bk000002:2"]);
  });
});

describe("markUnlisted", () => {
  it("marks bookings a finished pass did not list, and clears the mark when one is seen again", () => {
    store.save(
      feedBatch(
        [1, 2, 3].map((i) => okSummary(summaryRaw(i))),
        T1,
      ),
    );
    const runId = store.startRun({ kind: "reconcile", stream: null, startedAt: T2, checkpointBefore: null });
    details([fullRaw(1)], T2, runId);
    details([fullRaw(2)], T2, runId);
    store.save(feedBatch([okSummary(summaryRaw(4))], T3)); // first seen after the pass began
    expect(store.markUnlisted({ runId, startedAt: T2, at: T3 })).toBe(1);
    expect(row("bk000003").missing_since).toBe(T3);
    expect([row("bk000001"), row("bk000002"), row("bk000004")].map((r) => r.missing_since)).toEqual([
      null,
      null,
      null,
    ]);
    expect(store.markUnlisted({ runId, startedAt: T2, at: T3 })).toBe(0);
    expect(store.countBookings({ excludeMissing: true })).toBe(3);
    expect(store.bookingsNeedingDetails(10, T1).map((b) => b.id)).toEqual(["bk000004"]);
    const seen = store.save(feedBatch([okSummary(summaryRaw(3))], T3));
    expect(seen.unchanged).toBe(1);
    expect(row("bk000003").missing_since).toBeNull();
  });

  it("judges only the platform and time range the pass covered", () => {
    store.save(
      feedBatch(
        [1, 2, 3, 4].map((i) => okSummary(summaryRaw(i))),
        T1,
      ),
    );
    // Created after the pass began (a server clock ahead of ours): not judged.
    store.save(feedBatch([okSummary(summaryRaw(5, { createdAt: T3 }))], T1));
    const runId = store.startRun({ kind: "reconcile", stream: null, startedAt: T2, checkpointBefore: null });
    expect(store.markUnlisted({ runId, startedAt: T2, at: T3, sourcePlatform: "web", since: at(2) })).toBe(1);
    const marks = [1, 2, 3, 4, 5].map((i) => row(`bk00000${i}`).missing_since);
    expect(marks).toEqual([null, null, T3, null, null]);
    expect(store.countBookings({ sourcePlatform: "mobile", excludeMissing: true })).toBe(2);
  });

  it("satisfies the ports the list-bookings passes are written against", () => {
    expectTypeOf(store).toExtend<SyncStore>();
  });
});
