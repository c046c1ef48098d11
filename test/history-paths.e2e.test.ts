/**
 * History tells the truth whichever command filled the mirror: two mirrors of one source, one filled
 * by `sync` (details on, as by default) and one by `backfill`, hold no `booking_changes` rows; after
 * the same changes at the source and the same `sync` and `reconcile`, they hold the same rows, and
 * only for the bookings that changed.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type Simulator, startSimulator } from "../src/simulator/index.js";
import { runCliInProcess } from "./support/cli-in-process.js";
import { analyst } from "./support/harness.js";

let sim: Simulator | undefined;
const dirs: string[] = [];
afterEach(async () => {
  await sim?.close();
  sim = undefined;
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

type Row = { booking_id: string; field: string; old_value: string | null; new_value: string | null };

function history(db: string): Row[] {
  const mirror = analyst(db);
  try {
    return mirror
      .prepare("SELECT booking_id, field, old_value, new_value FROM booking_changes ORDER BY 1, 2, 3, 4")
      .all() as Row[];
  } finally {
    mirror.close();
  }
}

describe("booking_changes is the same whichever command filled the mirror", () => {
  it("sync with details and backfill record nothing at first, then the same real changes", async () => {
    const BOOKINGS = 1200;
    sim = await startSimulator({ seed: 29, bookings: BOOKINGS });
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "booking-sync-history-"));
    dirs.push(dir);
    const env = (db: string) => ({
      PATH: process.env.PATH,
      BOOKING_API_BASE_URL: sim?.url,
      BOOKING_API_TOKEN: "sim-token",
      BOOKING_DB_PATH: path.join(dir, db),
      LOG_LEVEL: "warn",
    });
    const run = async (db: string, ...args: string[]) => {
      const r = await runCliInProcess(args, env(db));
      expect(r.code, `${args.join(" ")} on ${db}: ${r.stderr.slice(-1500)}`).toBe(0);
      return r;
    };
    await run("synced.db", "sync");
    await run("backfilled.db", "backfill");
    expect(history(path.join(dir, "synced.db"))).toEqual([]);
    expect(history(path.join(dir, "backfilled.db"))).toEqual([]);
    // A sync after a backfill against an unchanged source reports nothing as updated.
    const quiet = await run("backfilled.db", "sync");
    expect(quiet.stdout).toMatch(/\b0 updated\b/);

    // 25 real changes spread over the whole history, most far older than the feed's lookback.
    const changed = Array.from({ length: 25 }, (_, k) => Math.floor((k * BOOKINGS) / 25) + 3);
    for (const i of changed) sim.update(i);
    const changedIds = new Set(changed.map((i) => sim?.dataset.full(i)._id));
    for (const db of ["synced.db", "backfilled.db"]) {
      await run(db, "sync");
      await run(db, "reconcile");
    }
    const synced = history(path.join(dir, "synced.db"));
    const backfilled = history(path.join(dir, "backfilled.db"));
    expect(synced.length).toBeGreaterThan(0);
    expect(synced).toEqual(backfilled);
    // Only bookings that changed have history, and every one of them has.
    expect(new Set(synced.map((r) => r.booking_id))).toEqual(changedIds);
    expect(
      synced.every((r) => r.old_value !== null && r.new_value !== null && r.old_value !== r.new_value),
    ).toBe(true);
  });
});
