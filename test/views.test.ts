/**
 * The analysts' views (drizzle/0003_views.sql, drizzle/postgres/0001_views.sql) against figures
 * computed here, in JS, from the simulator's own records: a full backfill fills the mirror, on each
 * backend, and every view must agree with the source.
 */
import { afterEach, expect, it } from "vitest";
import type { SimFullBooking } from "../src/simulator/index.js";
import { importLabels, type StateLabels } from "../src/store/labels.js";
import { isSqlite } from "../src/store/store.js";
import { runBackfill } from "../src/sync/backfill/backfill.js";
import { type MirrorHarness, mirrorHarness, type Query } from "./support/mirror-harness.js";
import { type Backend, describeBackends } from "./support/postgres.js";

let h: MirrorHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

// 480 bookings 9 minutes apart from 21:00 UTC: three days and more, with bookings between 23:00 and
// 24:00 UTC, which belong to the next day in Lagos.
const DATA = { bookings: 480, seed: 11, epochMs: Date.UTC(2025, 4, 1, 21, 0), spacingMs: 9 * 60_000 };
const HOUR_MS = 3_600_000;
/** Money is summed in floating point on both sides: equal to within a hundredth of a naira. */
const CENT = 0.01;

/** The calendar day in Africa/Lagos: UTC+1 all year, no daylight saving. */
const lagosDay = (createdAt: string) => new Date(Date.parse(createdAt) + HOUR_MS).toISOString().slice(0, 10);

/** A mirror filled by a full backfill (every booking with its details), and SQL on what it committed. */
async function fullMirror(
  backend: Backend,
): Promise<{ h: MirrorHarness; query: Query; source: SimFullBooking[] }> {
  h = await mirrorHarness(backend, DATA);
  const report = await runBackfill(h.deps(), { concurrency: 4 });
  expect(report).toMatchObject({ status: "success", inserted: DATA.bookings });
  return { h, query: h.query, source: h.sim.allFull() };
}

/** Imports state labels: `labels import`'s code on SQLite; on Postgres, which it does not serve, plain SQL. */
async function setLabels(h: MirrorHarness, labels: Partial<StateLabels>): Promise<void> {
  if (isSqlite(h.mirror)) {
    importLabels(h.mirror.db, labels);
    return;
  }
  await h.execute("DELETE FROM state_labels");
  for (const [kind, codes] of Object.entries(labels)) {
    for (const [code, label] of Object.entries(codes)) {
      await h.execute("INSERT INTO state_labels (kind, code, label) VALUES ($1, $2, $3)", [
        kind,
        Number(code),
        label,
      ]);
    }
  }
}

function expectMoney(actual: number, expected: number, what: string): void {
  expect(Math.abs(actual - expected), `${what}: ${actual} vs ${expected}`).toBeLessThan(CENT);
}

interface DailyRow {
  day: string;
  source_platform: string;
  booking_type: string;
  bookings: number;
  paid_bookings: number;
  total_amount: number;
  vat: number;
}

async function expectDaily(query: Query, source: SimFullBooking[]): Promise<void> {
  const want = new Map<string, Omit<DailyRow, "day" | "source_platform" | "booking_type">>();
  for (const b of source) {
    const key = [lagosDay(b.createdAt), b.sourcePlatform, b.type].join(" ");
    const g = want.get(key) ?? { bookings: 0, paid_bookings: 0, total_amount: 0, vat: 0 };
    g.bookings++;
    if (b.paid) g.paid_bookings++;
    g.total_amount += b.totalAmount;
    g.vat += b.bookingVat;
    want.set(key, g);
  }
  const rows = await query<DailyRow>("SELECT * FROM daily_bookings_v");
  const got = new Map(rows.map((r) => [[r.day, r.source_platform, r.booking_type].join(" "), r]));
  expect([...got.keys()].sort()).toEqual([...want.keys()].sort());
  for (const [key, w] of want) {
    const r = got.get(key) as DailyRow;
    expect({ bookings: r.bookings, paid: r.paid_bookings }, key).toEqual({
      bookings: w.bookings,
      paid: w.paid_bookings,
    });
    expectMoney(r.total_amount, w.total_amount, `${key} total_amount`);
    expectMoney(r.vat, w.vat, `${key} vat`);
  }
}

interface ItemRow {
  booking_id: string;
  lagos_day: string;
  source_platform: string;
  booking_type: string;
  package_position: number;
  package_id: string;
  item_position: number;
  item_id: string;
  name: string;
  hs_code: string;
  quantity: number;
  price: number;
  line_value: number;
}

async function expectItems(query: Query, source: SimFullBooking[]): Promise<void> {
  const want: ItemRow[] = source.flatMap((b) =>
    b.packages.packages.flatMap((p, k) =>
      p.items.map((it, j) => ({
        booking_id: b._id,
        lagos_day: lagosDay(b.createdAt),
        source_platform: b.sourcePlatform,
        booking_type: b.type,
        package_position: k,
        package_id: p._id,
        item_position: j,
        item_id: it._id,
        name: it.name,
        hs_code: it.hsCode,
        quantity: it.quantity,
        price: it.price,
        line_value: it.quantity * it.price,
      })),
    ),
  );
  const columns = Object.keys(want[0] as ItemRow).join(", ");
  const rows = await query<ItemRow>(
    `SELECT ${columns} FROM items_v ORDER BY booking_id, package_position, item_position`,
  );
  const order = (a: ItemRow, b: ItemRow) =>
    a.booking_id.localeCompare(b.booking_id) ||
    a.package_position - b.package_position ||
    a.item_position - b.item_position;
  expect(rows.length).toBe(want.length);
  expect(rows).toEqual(want.sort(order));
}

interface BookingRow {
  booking_id: string;
  search_id: string;
  source_platform: string;
  booking_type: string;
  created_at: string;
  lagos_day: string;
  paid: number;
  paid_label: string;
  booking_state: number;
  booking_state_label: string;
  order_state: number;
  order_state_label: string;
  customer_acceptance_state: number;
  customer_acceptance_state_label: string;
  total_amount: number;
  sub_total: number;
  vat: number;
  carrier: string;
  service_type: string;
  has_details: number;
}

/** `labels` by kind and code; a code without one must read `state <code>`. */
type Labels = Record<string, Record<number, string>>;

async function expectBookings(query: Query, source: SimFullBooking[], labels: Labels = {}): Promise<void> {
  const label = (kind: string, code: number) => labels[kind]?.[code] ?? `state ${code}`;
  const want: BookingRow[] = source.map((b) => ({
    booking_id: b._id,
    search_id: b.searchId,
    source_platform: b.sourcePlatform,
    booking_type: b.type,
    created_at: b.createdAt,
    lagos_day: lagosDay(b.createdAt),
    paid: b.paid ? 1 : 0,
    paid_label: b.paid ? "paid" : "unpaid",
    booking_state: b.bookingState,
    booking_state_label: label("booking_state", b.bookingState),
    order_state: b.orderState,
    order_state_label: label("order_state", b.orderState),
    customer_acceptance_state: b.customerAcceptanceState,
    customer_acceptance_state_label: label("customer_acceptance_state", b.customerAcceptanceState),
    total_amount: b.totalAmount,
    sub_total: b.subTotal,
    vat: b.bookingVat,
    carrier: b.carrier,
    service_type: b.serviceType,
    has_details: 1,
  }));
  const columns = Object.keys(want[0] as BookingRow).join(", ");
  const rows = await query<BookingRow>(`SELECT ${columns} FROM bookings_v ORDER BY booking_id`);
  expect(rows.length).toBe(source.length);
  expect(rows).toEqual(want.sort((a, b) => a.booking_id.localeCompare(b.booking_id)));
}

describeBackends("analyst views", (backend) => {
  it("daily_bookings_v counts and sums per Lagos day, platform and type as the source's records do", async () => {
    const { query, source } = await fullMirror(backend);
    // A booking between 23:00 and 24:00 UTC counts on the next day: the shift is proven, not assumed.
    const late = source.find((b) => new Date(b.createdAt).getUTCHours() === 23);
    expect(late, "a booking created between 23:00 and 24:00 UTC").toBeDefined();
    const b = late as SimFullBooking;
    expect(lagosDay(b.createdAt)).not.toBe(b.createdAt.slice(0, 10));
    const its = await query(
      "SELECT day FROM daily_bookings_v WHERE day = $1 AND source_platform = $2 AND booking_type = $3",
      [lagosDay(b.createdAt), b.sourcePlatform, b.type],
    );
    expect(its).toEqual([{ day: lagosDay(b.createdAt) }]);
    // Four Lagos days: 2025-05-01 (from 21:00 UTC) to 2025-05-04.
    expect(await query("SELECT DISTINCT day FROM daily_bookings_v ORDER BY day")).toEqual(
      ["2025-05-01", "2025-05-02", "2025-05-03", "2025-05-04"].map((day) => ({ day })),
    );
    await expectDaily(query, source);
  });

  it("items_v has one row per item with its package, HS code, quantity, price and line value", async () => {
    const { query, source } = await fullMirror(backend);
    await expectItems(query, source);
  });

  it("bookings_v has one row per booking with flags as 0/1 and words, amounts, and has_details", async () => {
    const { h, query, source } = await fullMirror(backend);
    await expectBookings(query, source);
    // A booking whose details were never fetched says so.
    const thin = source[7] as SimFullBooking;
    await h.execute("UPDATE bookings SET detail_synced_at = NULL WHERE id = $1", [thin._id]);
    const flags = await query("SELECT booking_id, has_details FROM bookings_v WHERE has_details = 0");
    expect(flags).toEqual([{ booking_id: thin._id, has_details: 0 }]);
  });

  it("state labels: 'state <code>' without a label, never NULL; the label once imported", async () => {
    const { h, query, source } = await fullMirror(backend);
    await expectBookings(query, source);
    const nulls = await query(
      `SELECT count(*) AS n FROM bookings_v WHERE booking_state_label IS NULL OR order_state_label IS NULL
         OR customer_acceptance_state_label IS NULL`,
    );
    expect(nulls).toEqual([{ n: 0 }]);
    const labels = {
      booking_state: { 0: "draft", 1: "pending", 2: "confirmed" },
      order_state: { 3: "in transit" },
      customer_acceptance_state: { 0: "awaiting", 1: "accepted" },
    };
    await setLabels(h, labels);
    await expectBookings(query, source, labels);
  });

  it("a booking marked missing leaves every view", async () => {
    const { h, query, source } = await fullMirror(backend);
    const gone = source.find((b) => b.packages.packages.length > 1) as SimFullBooking;
    await h.execute("UPDATE bookings SET missing_since = $1 WHERE id = $2", [
      new Date().toISOString(),
      gone._id,
    ]);
    const served = source.filter((b) => b._id !== gone._id);
    await expectBookings(query, served);
    await expectDaily(query, served);
    await expectItems(query, served);
  });

  it("sync_health_v: the last run per kind and stream, last success, checkpoint and age, drift, rejects", async () => {
    // Bookings up to now, so the sync's look-back re-reads a page the malformed fault can corrupt.
    h = await mirrorHarness(backend, { bookings: 300, seed: 11 });
    const backfill = await runBackfill(h.deps(), { concurrency: 4 });
    expect(backfill.status).toBe("success");
    h.sim.remove(0); // the source now serves one booking fewer than the mirror holds
    h.sim.inject({ kind: "malformed", count: 1 }, { path: "feed" });
    const synced = await h.sync();
    expect(synced).toMatchObject({ status: "success", rejected: 1 });
    h.sim.inject({ kind: "401" }, { path: "feed" });
    const failed = await h.sync();
    expect(failed.status).toBe("failed");

    const rows = await h.query("SELECT * FROM sync_health_v ORDER BY kind, stream");
    const backfillCheckpoint = (await h.mirror.readStream(backfill.stream)).checkpoint;
    const common = { rejects: 1, last_error: expect.any(String) };
    expect(rows).toMatchObject([
      {
        kind: "backfill",
        stream: backfill.stream,
        last_run_id: backfill.runId,
        last_status: "success",
        last_error: null,
        last_success_at: backfill.finishedAt,
        checkpoint: backfillCheckpoint,
        // A backfill records the drift it saw: the list's total against the mirror it filled.
        drift: 0,
        rejects: 1,
      },
      {
        ...common,
        kind: "sync",
        stream: "feed",
        last_run_id: failed.runId,
        last_status: "failed",
        last_started_at: failed.startedAt,
        last_finished_at: failed.finishedAt,
        last_success_at: synced.finishedAt,
        checkpoint: synced.checkpointAfter,
        // The failed run checked nothing; the drift is the successful run's: 299 served, 300 held.
        drift: h.sim.allSummaries().length - backfill.inserted,
      },
    ]);
    expect(rows.length).toBe(2);
    const feed = rows[1] as { checkpoint: string; checkpoint_age_seconds: number; last_error: string };
    expect(feed.last_error).toContain("401");
    const ageSeconds = (Date.now() - Date.parse(feed.checkpoint)) / 1000;
    expect(feed.checkpoint_age_seconds).toBeGreaterThanOrEqual(0);
    expect(Math.abs(feed.checkpoint_age_seconds - ageSeconds)).toBeLessThanOrEqual(2);
  });
});
