/**
 * The mirror keeps each record's JSON as the source served it: the CLI's `main` syncs, with details,
 * from a source whose records hold digits no double holds, a `10.50`, escapes and a layout of their
 * own, on both databases. A record that repeats a key is stored as parsed instead, so its JSON never
 * says one thing where its columns say another.
 */
import { afterEach, expect, it } from "vitest";
import { runCliInProcess } from "./support/cli-in-process.js";
import { type CraftedSource, recordText, startCraftedSource, verbatim } from "./support/crafted-source.js";
import { mirrorSql } from "./support/mirror-harness.js";
import { describeBackends } from "./support/postgres.js";

let source: CraftedSource | undefined;
afterEach(async () => {
  await source?.close();
  source = undefined;
});

/** Bookings whose records are written by hand, and the one that repeats a key (newest first). */
const exact = (k: number) => k % 50 === 3;
const REPEATS = 7;

describeBackends("records stored as served", (backend) => {
  it("keeps every record's text to the digit; one that repeats a key is stored as parsed", async () => {
    source = await startCraftedSource({
      count: 250,
      seed: 28,
      craft(b, k) {
        if (exact(k)) {
          for (const r of [b.summary, b.full])
            Object.assign(r, {
              weight: verbatim("12345678901234567890.125"),
              searchId: verbatim('"caf\\u00e9"'),
            });
          Object.assign(b.full, {
            totalAmount: verbatim("10.50"),
            extraCharges: verbatim('{ "fuelSurcharge" : { "amount" : 1.0 } }'),
          });
        }
        if (k === REPEATS) Object.assign(b.full, { paid: verbatim('false, "paid": true') });
      },
    });
    const location = await backend.url();
    const db = backend.kind === "sqlite" ? { BOOKING_DB_PATH: location } : { BOOKING_DB_URL: location };
    const env = {
      PATH: process.env.PATH,
      BOOKING_API_BASE_URL: source.url,
      BOOKING_API_TOKEN: source.token,
      LOG_LEVEL: "warn",
      ...db,
    };
    const result = await runCliInProcess(["sync"], env);
    expect(result.code, result.stderr.slice(-2000)).toBe(0);
    const sql = mirrorSql(backend.kind, location);
    try {
      type Row = { id: string; summary_json: string; detail_json: string; paid: number; weight: number };
      const rows = await sql.query<Row>("SELECT id, summary_json, detail_json, paid, weight FROM bookings");
      const byId = new Map(rows.map((r) => [r.id, r]));
      expect(rows).toHaveLength(source.bookings.length);
      source.bookings.forEach((b, k) => {
        const row = byId.get(b.id) as Row;
        expect(row.summary_json, b.id).toBe(recordText(b.summary));
        if (k !== REPEATS) expect(row.detail_json, b.id).toBe(recordText(b.full));
      });
      const handmade = byId.get(source.bookings[3]?.id ?? "") as Row;
      expect(handmade.detail_json).toContain('"weight":12345678901234567890.125');
      expect(handmade.detail_json).toContain('"totalAmount":10.50');
      expect(handmade.detail_json).toContain('"searchId":"caf\\u00e9"');
      // The column holds the nearest double, as it always did; the JSON holds every digit.
      expect(handmade.weight).toBe(Number("12345678901234567890.125"));
      const repeats = byId.get(source.bookings[REPEATS]?.id ?? "") as Row;
      const parsed = JSON.parse(
        recordText((source.bookings[REPEATS] as CraftedSource["bookings"][number]).full),
      );
      expect(repeats.detail_json).toBe(JSON.stringify(parsed));
      expect(JSON.parse(repeats.detail_json).paid).toBe(true);
      expect(repeats.paid).toBe(1);

      // Served again, the same values spelt otherwise: the text follows, and nothing changed.
      const respelt = source.bookings[3] as CraftedSource["bookings"][number];
      Object.assign(respelt.summary, { weight: verbatim("1.2345678901234567890125e19") });
      const times = "SELECT summary_synced_at AS at FROM bookings WHERE id = $1";
      const [before] = await sql.query<{ at: string }>(times, [respelt.id]);
      const history = "SELECT count(*) AS n FROM booking_changes";
      const [changesBefore] = await sql.query<{ n: number }>(history);
      const again = await runCliInProcess(["sync"], env);
      expect(again.code, again.stderr.slice(-2000)).toBe(0);
      expect(again.stdout).toMatch(/ 0 new, 0 updated, /);
      const [after] = await sql.query<{ summary_json: string; at: string }>(
        "SELECT summary_json, summary_synced_at AS at FROM bookings WHERE id = $1",
        [respelt.id],
      );
      expect(after?.summary_json).toBe(recordText(respelt.summary));
      expect(after?.at).toBe(before?.at);
      const [changesAfter] = await sql.query<{ n: number }>(history);
      expect(changesAfter?.n).toBe(changesBefore?.n);
    } finally {
      await sql.close();
    }
  });
});
