/**
 * SYNC_PERSONAL_DATA end to end, through the path users run: the CLI's `main` in-process (feed,
 * backfill, details and the repair all saved through its store's one connection, closed when it
 * returns; the usage errors through the built CLI, a subprocess, for their exit code) against the
 * bundled simulator, with malformed records on the way (one without `_id`, quarantined; two kept as
 * bookings with their problems noted). After
 * it exits, the bytes of the database file and its -wal are searched for people the simulator
 * served.
 */
import { createHash } from "node:crypto";
import fs from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Simulator, startSimulator } from "../src/simulator/index.js";
import { hasher } from "../src/store/personal-data.js";
import { runCliInProcess } from "./support/cli-in-process.js";
import { analyst, runCli } from "./support/harness.js";
import { tempDir } from "./support/store-fixtures.js";

const BOOKINGS = 300;
const KEY = "personal-data-test-key-0123456789";

let sim: Simulator;
beforeAll(async () => {
  sim = await startSimulator({ seed: 11, bookings: BOOKINGS });
});
afterAll(async () => {
  await sim?.close();
});

/** A few people of the data set: the newest (quarantined once, without `_id`), one mid-way, the oldest. */
function people() {
  // Staff names come from the same lists and are kept (`servedBy`): leave out customers who share one.
  const staff = new Set(sim.allFull().map((b) => b.servedBy));
  return [BOOKINGS - 1, BOOKINGS - 2, 150, 0].flatMap((i) => {
    const b = sim.dataset.full(i);
    return [b.sender, b.receiver].map((party) => ({
      id: b._id,
      name: party.contact.name,
      phone: party.contact.phone,
      email: party.contact.email,
      addressLine1: party.addressDetails.addressLine1,
      staffName: staff.has(party.contact.name),
    }));
  });
}

/** Every byte SQLite keeps: the database file and its WAL, read after the CLI has exited. */
function fileBytes(db: string): Buffer {
  const parts = [db, `${db}-wal`].filter((f) => fs.existsSync(f)).map((f) => fs.readFileSync(f));
  return Buffer.concat(parts);
}

/** Runs sync with details, then a backfill, then another sync; returns what each printed. */
async function mirror(env: NodeJS.ProcessEnv) {
  sim.clearFaults();
  sim.inject({ kind: "malformed", count: 3 }, { path: "feed" });
  const first = await runCliInProcess(["sync", "--details"], env);
  expect(first.code, first.stderr).toBe(0);
  return first;
}

/** The bookings the feed served malformed the first time: the three newest. */
const malformedIds = () => new Set([1, 2, 3].map((k) => sim.dataset.full(BOOKINGS - k)._id));

/** Rows of `rejected_records`: what the mirror quarantined (at least the record without `_id`). */
function rejectCount(db: string): number {
  const reader = analyst(db);
  try {
    return reader.prepare("SELECT count(*) FROM rejected_records").pluck().get() as number;
  } finally {
    reader.close();
  }
}

/**
 * A backfill, then two syncs: the backfill re-reads the feed too, so it stores the summaries of the
 * bookings the feed served malformed the first time, as the source serves them now; the syncs re-read.
 */
async function again(env: NodeJS.ProcessEnv) {
  const backfill = await runCliInProcess(["backfill"], env);
  expect(backfill.code, backfill.stderr).toBe(0);
  const first = await runCliInProcess(["sync"], env);
  expect(first.code, first.stderr).toBe(0);
  expect(first.stdout).toMatch(/: 0 new, 0 updated/);
  const sync = await runCliInProcess(["sync"], env);
  expect(sync.code, sync.stderr).toBe(0);
  return { backfill, sync };
}

function setup(mode: string, extra: Record<string, string> = {}) {
  const tmp = tempDir();
  const db = tmp.file("bookings.db");
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    BOOKING_API_BASE_URL: sim.url,
    BOOKING_API_TOKEN: "sim-token",
    BOOKING_DB_PATH: db,
    SYNC_PERSONAL_DATA: mode,
    LOG_LEVEL: "warn",
    ...extra,
  };
  return { tmp, db, env };
}

const PERSONAL_COLUMNS = [
  "sender_name",
  "sender_phone",
  "sender_email",
  "receiver_name",
  "receiver_phone",
  "receiver_email",
];

/** Each booking's personal columns and stored JSON, to compare two runs. */
function snapshot(db: string) {
  const reader = analyst(db);
  try {
    return reader
      .prepare(
        `SELECT id, ${PERSONAL_COLUMNS.join(", ")}, summary_json, detail_json FROM bookings ORDER BY id`,
      )
      .all() as Array<Record<string, unknown>>;
  } finally {
    reader.close();
  }
}

describe("SYNC_PERSONAL_DATA through the CLI", () => {
  it("keep (the default) stores names, phones, emails and address lines as received", async () => {
    const { tmp, db, env } = setup("keep");
    try {
      await mirror(env);
      const bytes = fileBytes(db);
      for (const p of people()) {
        expect(bytes.includes(p.name), p.name).toBe(true);
        expect(bytes.includes(p.phone), p.phone).toBe(true);
        expect(bytes.includes(p.email), p.email).toBe(true);
        expect(bytes.includes(p.addressLine1), p.addressLine1).toBe(true);
      }
      const reader = analyst(db);
      const newest = people()[0];
      const row = reader
        .prepare("SELECT sender_name, sender_phone FROM bookings WHERE id = ?")
        .get(newest?.id);
      expect(row).toEqual({ sender_name: newest?.name, sender_phone: newest?.phone });
      // The quarantined copies hold people too.
      const rejects = reader.prepare("SELECT raw_json FROM rejected_records").pluck().all() as string[];
      expect(rejects.length).toBeGreaterThan(0);
      expect(rejects.join("\n")).toContain(people()[1]?.phone);
      reader.close();
    } finally {
      tmp.cleanup();
    }
  });

  it("hash stores keyed hashes, stable across runs, and no person in the files", async () => {
    const { tmp, db, env } = setup("hash", { SYNC_PERSONAL_DATA_KEY: KEY });
    try {
      await mirror(env);
      const before = snapshot(db);
      const { backfill, sync } = await again(env);
      // Re-read records serialise to the same text: nothing counts as changed, nothing is rewritten,
      // but the summaries the feed served malformed the first time, which the backfill re-reads.
      expect(backfill.stdout).toMatch(/: 0 new, [1-3] updated/);
      expect(sync.stdout).toMatch(/: 0 new, 0 updated/);
      const after = snapshot(db);
      // Only the summaries served malformed the first time differ.
      const malformed = malformedIds();
      const steady = (rows: typeof before) =>
        rows.map((row) => (malformed.has(row.id as string) ? { ...row, summary_json: null } : row));
      expect(
        before.filter((row) => row.summary_json === null).every((row) => malformed.has(row.id as string)),
      ).toBe(true);
      expect(steady(after)).toEqual(steady(before));

      const bytes = fileBytes(db);
      const hash = hasher(KEY);
      for (const p of people()) {
        if (!p.staffName) expect(bytes.includes(p.name), p.name).toBe(false);
        expect(bytes.includes(p.phone), p.phone).toBe(false);
        expect(bytes.includes(p.phone.slice(1)), p.phone).toBe(false);
        expect(bytes.includes(p.email), p.email).toBe(false);
        expect(bytes.includes(p.addressLine1), p.addressLine1).toBe(false);
        expect(bytes.includes(hash(p.phone, "phone")), p.phone).toBe(true);
        expect(bytes.includes(hash(p.email, "email")), p.email).toBe(true);
      }
      const reader = analyst(db);
      const newest = people()[0];
      const row = reader.prepare("SELECT sender_name, sender_phone, sender_city FROM bookings WHERE id = ?");
      expect(row.get(newest?.id)).toEqual({
        sender_name: hash(newest?.name as string, "text"),
        sender_phone: hash(newest?.phone as string, "phone"),
        sender_city: sim.dataset.full(BOOKINGS - 1).sender.addressDetails.city,
      });
      // Analysts can still count customers: one hash per distinct phone.
      const distinct = (sql: string) => reader.prepare(sql).pluck().get();
      const phones = new Set(sim.allFull().map((b) => b.receiver.contact.phone.replace(/\D/g, "")));
      expect(distinct("SELECT count(DISTINCT receiver_phone) FROM bookings")).toBe(phones.size);
      const rejects = reader.prepare("SELECT raw_json FROM rejected_records").pluck().all() as string[];
      expect(rejects.length).toBeGreaterThan(0);
      expect(rejects.join("\n")).toContain("hmac-sha256:");
      reader.close();
    } finally {
      tmp.cleanup();
    }
  });

  it("drop stores no person: personal columns NULL, personal keys gone from every JSON", async () => {
    const { tmp, db, env } = setup("drop");
    try {
      await mirror(env);
      await again(env);
      const bytes = fileBytes(db);
      for (const p of people()) {
        if (!p.staffName) expect(bytes.includes(p.name), p.name).toBe(false);
        expect(bytes.includes(p.phone), p.phone).toBe(false);
        expect(bytes.includes(p.email), p.email).toBe(false);
        expect(bytes.includes(p.addressLine1), p.addressLine1).toBe(false);
      }
      expect(bytes.includes("sha256:")).toBe(false);
      const reader = analyst(db);
      const count = (sql: string) => reader.prepare(sql).pluck().get();
      expect(count("SELECT count(*) FROM bookings")).toBe(BOOKINGS);
      const anyPersonal = PERSONAL_COLUMNS.map((c) => `${c} IS NOT NULL`).join(" OR ");
      expect(count(`SELECT count(*) FROM bookings WHERE ${anyPersonal}`)).toBe(0);
      expect(count("SELECT count(*) FROM bookings WHERE sender_city IS NULL OR detail_json IS NULL")).toBe(0);
      const paths = [
        "$.sender.contact.name",
        "$.receiver.contact.phone",
        "$.receiver.addressDetails.streetLines",
      ];
      for (const path of paths)
        expect(
          count(`SELECT count(*) FROM bookings WHERE json_type(detail_json, '${path}') IS NOT NULL`),
        ).toBe(0);
      expect(
        count(
          "SELECT count(*) FROM bookings WHERE json_extract(detail_json, '$.receiver.addressDetails.city') IS NULL",
        ),
      ).toBe(0);
      expect(count("SELECT count(*) FROM rejected_records")).toBeGreaterThan(0);
      reader.close();
    } finally {
      tmp.cleanup();
    }
  });

  it("hash without a key warns, and stores plain SHA-256 that anyone can recompute", async () => {
    const { tmp, db, env } = setup("hash");
    try {
      const r = await runCliInProcess(["sync"], env);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toContain("SYNC_PERSONAL_DATA=hash without SYNC_PERSONAL_DATA_KEY");
      const newest = sim.dataset.full(BOOKINGS - 1);
      const reader = analyst(db);
      const row = reader.prepare("SELECT receiver_phone FROM bookings WHERE id = ?").get(newest._id);
      reader.close();
      const digits = newest.receiver.contact.phone.replace(/\D/g, "");
      expect(row).toEqual({ receiver_phone: `sha256:${createHash("sha256").update(digits).digest("hex")}` });
      expect(fileBytes(db).includes(newest.receiver.contact.phone)).toBe(false);
    } finally {
      tmp.cleanup();
    }
  });

  it("rewrite-personal-data turns a kept mirror into the one hash would have stored, then drop", async () => {
    const { tmp, db, env } = setup("keep");
    try {
      await mirror(env);
      const keep = await runCliInProcess(["rewrite-personal-data"], env);
      expect(keep.code).toBe(2);
      expect(keep.stderr).toContain("SYNC_PERSONAL_DATA is keep: there is nothing to rewrite");

      const hashed = { ...env, SYNC_PERSONAL_DATA: "hash", SYNC_PERSONAL_DATA_KEY: KEY };
      const rejected = rejectCount(db);
      expect(rejected).toBeGreaterThan(0);
      const rewrite = await runCliInProcess(["rewrite-personal-data"], hashed);
      expect(rewrite.code, rewrite.stderr).toBe(0);
      expect(rewrite.stdout).toContain(
        `rewrite-personal-data (hash): ${BOOKINGS} of ${BOOKINGS} bookings rewritten, ${rejected} rejected records`,
      );
      const bytes = fileBytes(db);
      for (const p of people()) {
        if (!p.staffName) expect(bytes.includes(p.name), p.name).toBe(false);
        expect(bytes.includes(p.phone), p.phone).toBe(false);
        expect(bytes.includes(p.email), p.email).toBe(false);
        expect(bytes.includes(p.addressLine1), p.addressLine1).toBe(false);
      }
      // A second run finds nothing left to do: hashes are not hashed again.
      const twice = await runCliInProcess(["rewrite-personal-data"], hashed);
      expect(twice.stdout).toContain(`0 of ${BOOKINGS} bookings rewritten, 0 rejected records`);
      // What it wrote is what hash stores from the source: re-read, nothing counts as changed but the
      // summaries the feed served malformed the first time.
      const { backfill } = await again(hashed);
      expect(backfill.stdout).toMatch(/: 0 new, [1-3] updated/);

      const dropped = await runCliInProcess(["rewrite-personal-data", "--personal-data", "drop"], env);
      expect(dropped.code, dropped.stderr).toBe(0);
      expect(dropped.stdout).toContain(
        `${BOOKINGS} of ${BOOKINGS} bookings rewritten, ${rejectCount(db)} rejected records`,
      );
      // Nor do the hashes survive in free pages or the WAL.
      expect(fileBytes(db).includes("sha256:")).toBe(false);
      const reader = analyst(db);
      const anyPersonal = PERSONAL_COLUMNS.map((c) => `${c} IS NOT NULL`).join(" OR ");
      expect(reader.prepare(`SELECT count(*) FROM bookings WHERE ${anyPersonal}`).pluck().get()).toBe(0);
      reader.close();
    } finally {
      tmp.cleanup();
    }
  });

  it("a bad value or a key without hash exits 2 before anything is opened", async () => {
    const { tmp, db, env } = setup("shred");
    try {
      const bad = await runCli(["sync"], env);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain('SYNC_PERSONAL_DATA = "shred" is not valid: expected keep, hash or drop');
      const flag = await runCli(["sync", "--personal-data", "HASHED"], env);
      expect(flag.code).toBe(2);
      expect(flag.stderr).toContain('--personal-data = "HASHED" is not valid');
      const keyed = await runCli(["sync"], {
        ...env,
        SYNC_PERSONAL_DATA: "keep",
        SYNC_PERSONAL_DATA_KEY: KEY,
      });
      expect(keyed.code).toBe(2);
      expect(keyed.stderr).toContain("SYNC_PERSONAL_DATA_KEY is set but SYNC_PERSONAL_DATA is keep");
      expect(keyed.stderr).not.toContain(KEY);
      expect(fs.existsSync(db)).toBe(false);
    } finally {
      tmp.cleanup();
    }
  });
});
