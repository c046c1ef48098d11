/**
 * Every booking the source serves is in `bookings`, whatever else is wrong with its record: the CLI
 * (the built one, a subprocess, for the first case; its `main` in-process for the others) syncs, with details, from a source whose records carry impossible times, 5 MB names
 * and nesting 200,000 levels deep, and must exit 0 with every keyed booking stored and its problem
 * noted, and only the keyless record quarantined.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runCliInProcess } from "./support/cli-in-process.js";
import { type CraftedSource, DEEP, startCraftedSource } from "./support/crafted-source.js";
import { analyst, runCli } from "./support/harness.js";

let source: CraftedSource | undefined;
const dirs: string[] = [];
afterEach(async () => {
  await source?.close();
  source = undefined;
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

const FIVE_MB = "N".repeat(5 * 1024 * 1024);

/** A sync into a new file: the CLI's `main` in-process, or the built CLI as a subprocess (`built`). */
async function sync(extra: Record<string, string> = {}, built = false) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "booking-sync-kept-"));
  dirs.push(dir);
  const db = path.join(dir, "mirror.db");
  const env = {
    PATH: process.env.PATH,
    BOOKING_API_BASE_URL: source?.url,
    BOOKING_API_TOKEN: source?.token,
    BOOKING_DB_PATH: db,
    LOG_LEVEL: "warn",
    ...extra,
  };
  const result = await (built ? runCli : runCliInProcess)(["sync"], env);
  return { result, db };
}

describe("a booking with one bad field is still a booking", () => {
  it("stores 1% of records with an impossible createdAt, 5 with a 5 MB name, and one nested 200,000 deep", async () => {
    source = await startCraftedSource({
      count: 1000,
      seed: 23,
      craft(b, k) {
        if (k % 100 === 37) {
          Object.assign(b.summary, { createdAt: "2026-02-30T10:00:00.000Z" });
          Object.assign(b.full, { createdAt: "2026-02-30T10:00:00.000Z" });
        }
        if (k % 200 === 11) {
          b.summary.receiver.contact.name = FIVE_MB;
          b.full.receiver.contact.name = FIVE_MB;
        }
        if (k === 500) {
          Object.assign(b.summary, { weight: DEEP });
          Object.assign(b.full, { weight: DEEP });
        }
      },
    });
    const { result, db } = await sync({}, true);
    expect(result.code, result.stderr.slice(-2000)).toBe(0);
    const mirror = analyst(db);
    try {
      const ids = mirror.prepare("SELECT booking_id FROM bookings_v ORDER BY 1").pluck().all();
      expect(ids).toEqual(source.bookings.map((b) => b.id).sort());
      const noted = (id: string) =>
        mirror.prepare("SELECT created_at, problems FROM bookings_v WHERE booking_id = ?").get(id) as {
          created_at: string | null;
          problems: string | null;
        };
      const badTime = source.bookings[37] as (typeof source.bookings)[number];
      expect(noted(badTime.id)).toMatchObject({
        created_at: null,
        problems: expect.stringMatching(/^createdAt /),
      });
      const bigName = source.bookings[11] as (typeof source.bookings)[number];
      expect(noted(bigName.id).problems).toMatch(
        /receiver\.contact\.name: 5242880 bytes, over the 65536-byte cap/,
      );
      const deep = source.bookings[500] as (typeof source.bookings)[number];
      expect(noted(deep.id).problems).toMatch(/^weight(\.0)+: nested deeper than 32 levels/);
      // The 5 MB values are markers with their size, in the stored JSON and nowhere else.
      const json = mirror
        .prepare("SELECT summary_json FROM bookings WHERE id = ?")
        .pluck()
        .get(bigName.id) as string;
      expect(JSON.parse(json).receiver.contact.name).toEqual({
        $omitted: { reason: "value", bytes: 5242880, cap: 65536 },
      });
      expect(fs.statSync(db).size).toBeLessThan(50 * 1024 * 1024);
      // Only what cannot be a booking is quarantined: nothing here.
      expect(mirror.prepare("SELECT count(*) FROM rejected_records").pluck().get()).toBe(0);
      const withProblems = mirror
        .prepare("SELECT count(*) FROM bookings_v WHERE problems IS NOT NULL")
        .pluck()
        .get();
      expect(withProblems).toBe(10 + 5 + 1);
    } finally {
      mirror.close();
    }
  });

  it("reads a page over the body cap again in smaller pages: a record over it, its time after the huge field, costs only itself", async () => {
    source = await startCraftedSource({
      count: 400,
      seed: 31,
      craft(b, k) {
        if (k === 123) {
          b.summary.receiver.contact.name = FIVE_MB;
          b.full.receiver.contact.name = FIVE_MB;
        }
      },
    });
    const big = source.bookings[123] as (typeof source.bookings)[number];
    // Both views name the receiver before `createdAt`, so the time shows only past the 5 MB.
    expect(Object.keys(big.summary).indexOf("receiver")).toBeLessThan(
      Object.keys(big.summary).indexOf("createdAt"),
    );
    const { result, db } = await sync({ SYNC_MAX_RESPONSE_MB: "1" });
    expect(result.code, result.stderr.slice(-2000)).toBe(0);
    const mirror = analyst(db);
    try {
      expect(mirror.prepare("SELECT id FROM bookings ORDER BY 1").pluck().all()).toEqual(
        source.bookings.map((b) => b.id).sort(),
      );
      const row = mirror
        .prepare("SELECT created_at, summary_json, summary_problems FROM bookings WHERE id = ?")
        .get(big.id) as { created_at: string; summary_json: string; summary_problems: string };
      expect(row.created_at).toBe(big.summary.createdAt);
      expect(JSON.parse(row.summary_json)).toMatchObject({ _id: big.id, $omitted: { reason: "record" } });
      expect(row.summary_problems).toMatch(/^record: \d+ bytes, over the 1048576-byte cap/);
    } finally {
      mirror.close();
    }
  });

  it("quarantines a record without `_id` alone, and stores the rest", async () => {
    source = await startCraftedSource({
      count: 300,
      seed: 5,
      craft(b, k) {
        if (k === 150) {
          Reflect.deleteProperty(b.summary, "_id");
          Reflect.deleteProperty(b.full, "_id");
        }
      },
    });
    const keyless = source.bookings[150]?.id;
    const { result, db } = await sync({ SYNC_DETAILS: "false" });
    expect(result.code, result.stderr.slice(-2000)).toBe(0);
    const mirror = analyst(db);
    try {
      const ids = mirror.prepare("SELECT id FROM bookings ORDER BY 1").pluck().all();
      expect(ids).toEqual(
        source.bookings
          .map((b) => b.id)
          .filter((id) => id !== keyless)
          .sort(),
      );
      // Once per view that served it: the feed's summary and the list's full record.
      expect(mirror.prepare("SELECT DISTINCT reason FROM rejected_records").pluck().all()).toEqual([
        "_id: missing or not a non-empty string",
      ]);
    } finally {
      mirror.close();
    }
  });
});
