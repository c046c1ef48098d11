/**
 * A typed mirror (`SYNC_BOOKING_TYPE=IN`) holds its type only, whichever command filled it: list-bookings
 * cannot filter by type and the bundled simulator serves both, so every list path (details, reconcile,
 * ties, backfill) must leave the other type out. The built CLI against the simulator, a real SQLite file.
 */
import { afterEach, describe, expect, it } from "vitest";
import { analyst, type Harness, harness, runCli } from "./support/harness.js";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** Bookings per booking_type, and the ids, as an analyst reads them. */
function mirror(dbPath: string) {
  const db = analyst(dbPath);
  try {
    const types = db
      .prepare("SELECT coalesce(booking_type, 'NULL') AS type, count(*) AS n FROM bookings GROUP BY 1")
      .all() as Array<{ type: string; n: number }>;
    const detailTypes = db
      .prepare(
        "SELECT DISTINCT json_extract(detail_json, '$.type') FROM bookings WHERE detail_json IS NOT NULL",
      )
      .pluck()
      .all();
    const ids = db.prepare("SELECT id FROM bookings ORDER BY id").pluck().all() as string[];
    return { types: Object.fromEntries(types.map((t) => [t.type, t.n])), detailTypes, ids };
  } finally {
    db.close();
  }
}

describe("a typed mirror holds its type only", () => {
  it("after sync with details, reconcile and backfill, bookings holds IN and every IN booking", async () => {
    h = await harness({ bookings: 700, pageSize: 50 });
    const want = h.sourceIds("IN");
    expect(h.sourceIds("LC").length, "the simulator serves both types").toBeGreaterThan(100);
    const env = h.env({ SYNC_BOOKING_TYPE: "IN", LOG_LEVEL: "warn" });
    for (const command of ["sync", "reconcile", "backfill", "sync"]) {
      const r = await runCli([command], env);
      expect(r.code, `${command}\n${r.stdout}${r.stderr}`).toBe(0);
      const seen = mirror(h.dbPath);
      expect(seen.types, `after ${command}`).toEqual({ IN: want.length });
      expect(seen.detailTypes, `after ${command}`).toEqual(["IN"]);
      expect(seen.ids, `after ${command}`).toEqual(want);
    }
  }, 120_000);
});
