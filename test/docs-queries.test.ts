/**
 * Every ```sql block of docs/queries.md, run as written against a mirror filled the way users fill
 * it: a real backfill from the simulator, then payments a later sync sees. Each must run and return
 * at least one row, so a query that silently answers nothing fails too.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SimSummaryBooking } from "../src/simulator/index.js";
import { runBackfill } from "../src/sync/backfill/backfill.js";
import { analyst, type Harness, harness } from "./support/harness.js";
import { listDeps } from "./support/list-deps.js";

const HOUR_MS = 3_600_000;
const DAY_SECONDS = 86_400;
// 300 bookings an hour apart, the newest now: twelve days and more, so some unpaid bookings are older
// than the 7 days one query asks about, and the Lagos days are many.
const DATA = { bookings: 300, seed: 11, spacingMs: HOUR_MS };
/** Bookings paid after the backfill saw them unpaid: 3 or 4 per platform, so both medians are taken. */
const paymentsFor = (platformNumber: number) => 3 + (platformNumber % 2);

/** Each ```sql block with the `##` heading it sits under, in the page's order. */
function sqlBlocks(markdown: string): Array<{ name: string; sql: string }> {
  const blocks: Array<{ name: string; sql: string }> = [];
  let heading = "(no heading)";
  for (const part of markdown.split(/^```/m).entries()) {
    const [i, text] = part;
    if (i % 2 === 0) {
      heading = [...text.matchAll(/^## (.+)$/gm)].at(-1)?.[1] ?? heading;
    } else if (text.startsWith("sql\n")) {
      const n = blocks.filter((b) => b.name.startsWith(heading)).length;
      blocks.push({ name: n === 0 ? heading : `${heading} (${n + 1})`, sql: text.slice("sql\n".length) });
    }
  }
  return blocks;
}

const QUERIES = sqlBlocks(readFileSync(join(import.meta.dirname, "../docs/queries.md"), "utf8"));

let h: Harness | undefined;
let db: Database.Database | undefined;
/** The bookings paid after the backfill, as the source served them before. */
let paidBookings: SimSummaryBooking[] = [];

beforeAll(async () => {
  h = await harness(DATA);
  const backfill = await runBackfill(listDeps(h), { concurrency: 4 });
  expect(backfill).toMatchObject({ status: "success", inserted: DATA.bookings });
  // Pay a few unpaid bookings of each platform; `update` flips `paid`. Oldest first: position = index.
  const oldestFirst = h.sim.allSummaries().reverse();
  const platforms = [...new Set(oldestFirst.map((b) => b.sourcePlatform))].sort();
  const paid = platforms.flatMap((platform, k) =>
    oldestFirst
      .flatMap((b, i) => (b.sourcePlatform === platform && !b.paid ? [i] : []))
      .slice(-paymentsFor(k)),
  );
  for (const i of paid) h.sim.update(i);
  paidBookings = paid.map((i) => oldestFirst[i] as SimSummaryBooking);
  // A look-back over the whole data set, so the feed reads every paid booking again.
  const sync = await h.sync({ lookbackSeconds: 30 * DAY_SECONDS });
  expect(sync.status).toBe("success");
  db = analyst(h.dbPath);
  const payments = db
    .prepare("SELECT count(*) FROM booking_changes WHERE field = 'paid' AND new_value = '1'")
    .pluck()
    .get();
  expect(payments).toBe(paid.length);
});

afterAll(async () => {
  db?.close();
  await h?.close();
});

describe("docs/queries.md", () => {
  it("has a ```sql block for each question it answers", () => {
    expect(QUERIES.map((q) => q.name)).toEqual([
      "Revenue by Lagos day",
      "Revenue by Lagos day (2)",
      "Unpaid bookings older than 7 days",
      "Top HS codes by declared value",
      "Bookings per carrier and service type",
      "Time to payment",
      "Freshness",
    ]);
  });

  it.each(QUERIES)("$name: runs as written and returns rows", ({ sql }) => {
    const rows = (db as Database.Database).prepare(sql).all();
    expect(rows.length).toBeGreaterThan(0);
  });

  it("time to payment: the median per platform is the one computed here, for odd and even counts", () => {
    const mirror = db as Database.Database;
    const seenPaid = mirror.prepare(
      "SELECT observed_at FROM booking_changes WHERE booking_id = ? AND field = 'paid' AND new_value = '1'",
    );
    const hours = new Map<string, number[]>();
    for (const b of paidBookings) {
      const observedAt = seenPaid.pluck().get(b._id) as string;
      const list = hours.get(b.sourcePlatform) ?? [];
      list.push((Date.parse(observedAt) - Date.parse(b.createdAt)) / HOUR_MS);
      hours.set(b.sourcePlatform, list);
    }
    const median = (xs: number[]) => {
      const s = [...xs].sort((a, b) => a - b);
      const mid = Math.floor(s.length / 2);
      return s.length % 2 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
    };
    const query = QUERIES.find((q) => q.name === "Time to payment") as { sql: string };
    const rows = mirror.prepare(query.sql).all() as Array<{
      source_platform: string;
      payments: number;
      median_hours: number;
    }>;
    expect(new Set(rows.map((r) => r.payments))).toEqual(new Set([3, 4]));
    expect(rows.map((r) => r.source_platform).sort()).toEqual([...hours.keys()].sort());
    for (const r of rows) {
      const want = hours.get(r.source_platform) as number[];
      expect(r.payments, r.source_platform).toBe(want.length);
      // Rounded to a tenth by the query; julianday() arithmetic is exact to well under that.
      expect(Math.abs(r.median_hours - median(want)), r.source_platform).toBeLessThanOrEqual(0.05 + 1e-6);
    }
  });
});
