/**
 * SYNC_PERSONAL_DATA fails closed, through the path users run: the CLI (its `main`, in-process) against a
 * hostile source whose records put people where the contract puts an object (a receiver that is an
 * array, text or a number, a contact that is an array, payments as an array, …). Each such record
 * is a booking (its `_id` is usable), stored from both views; under `hash` and `drop` the bytes of
 * the database file and its -wal hold none of those people; `rewrite-personal-data` does the same to
 * a mirror filled under `keep`.
 */
import fs from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCliInProcess } from "./support/cli-in-process.js";
import { analyst } from "./support/harness.js";
import { type HostileServer, startHostileServer } from "./support/hostile-server.js";
import { ODD_SHAPES, plant, planted } from "./support/odd-personal-shapes.js";
import { tempDir } from "./support/store-fixtures.js";

const BOOKINGS = 60;
const KEY = "odd-shapes-e2e-key-0123456789";

let server: HostileServer;
/** Ids of the bookings that carry an odd shape. */
let odd: string[];
/** Every personal value planted. */
let forbidden: string[];

beforeAll(async () => {
  server = await startHostileServer({ seed: 23, count: BOOKINGS });
  // Every fourth booking, newest first, carries shape i in both views.
  const bookings = server.data.newestFirst().filter((_, k) => k % 4 === 1);
  odd = ODD_SHAPES.map((_, i) => {
    const b = bookings[i];
    if (!b) throw new Error("too few bookings for the shapes");
    const full = b.full as unknown as Record<string, unknown>;
    const summary = b.summary as unknown as Record<string, unknown>;
    Object.assign(full, plant(full, i));
    Object.assign(summary, plant(summary, i));
    return b.id;
  });
  forbidden = ODD_SHAPES.flatMap((_, i) => planted(i));
});
afterAll(async () => {
  await server?.close();
});

function setup(mode: string, extra: Record<string, string> = {}) {
  const tmp = tempDir();
  const db = tmp.file("bookings.db");
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    BOOKING_API_BASE_URL: server.url,
    BOOKING_API_TOKEN: server.token,
    BOOKING_DB_PATH: db,
    SYNC_PAGE_SIZE: "20",
    SYNC_PERSONAL_DATA: mode,
    LOG_LEVEL: "warn",
    ...extra,
  };
  return { tmp, db, env };
}

/** Every byte SQLite keeps: the database file and its WAL, read after the CLI has exited. */
function fileBytes(db: string): Buffer {
  return Buffer.concat([db, `${db}-wal`].filter((f) => fs.existsSync(f)).map((f) => fs.readFileSync(f)));
}

/** The planted values found in the files. */
function leaked(db: string): string[] {
  const bytes = fileBytes(db);
  return forbidden.filter((value) => bytes.includes(value));
}

async function run(args: string[], env: NodeJS.ProcessEnv) {
  const r = await runCliInProcess(args, env);
  expect(r.code, `${args.join(" ")}: ${r.stderr}`).toBe(0);
  return r;
}

/**
 * A sync with details, a backfill and a sync again: the feed, the details and list pages all store.
 * Every odd record has a usable `_id`, so each is a booking and every run succeeds.
 */
async function fill(env: NodeJS.ProcessEnv) {
  await run(["sync"], env);
  await run(["backfill", "--restart"], env);
  await run(["sync"], env);
}

/** That each odd record is a booking with both views stored, so the files were searched where it is. */
function expectStored(db: string): void {
  const reader = analyst(db);
  try {
    const complete = new Set(
      reader
        .prepare("SELECT id FROM bookings WHERE summary_json IS NOT NULL AND detail_json IS NOT NULL")
        .pluck()
        .all() as string[],
    );
    for (const id of odd) expect(complete.has(id), id).toBe(true);
  } finally {
    reader.close();
  }
}

describe("SYNC_PERSONAL_DATA with personal subtrees of unexpected shapes, through the CLI", () => {
  it("keep stores them as received (what the other modes must not)", async () => {
    const { tmp, db, env } = setup("keep");
    try {
      await fill(env);
      expectStored(db);
      expect(leaked(db)).toEqual(forbidden);
    } finally {
      tmp.cleanup();
    }
  });

  it.each([
    ["hash", { SYNC_PERSONAL_DATA_KEY: KEY }],
    ["drop", {}],
  ] as const)("%s stores none of them, in any JSON, column, reject, file or WAL", async (mode, extra) => {
    const { tmp, db, env } = setup(mode, extra);
    try {
      await fill(env);
      expectStored(db);
      expect(leaked(db)).toEqual([]);
      if (mode === "drop") expect(fileBytes(db).includes("sha256:")).toBe(false);
    } finally {
      tmp.cleanup();
    }
  });

  it("rewrite-personal-data applies the same rule to a mirror filled under keep", async () => {
    const { tmp, db, env } = setup("keep");
    try {
      await fill(env);
      expect(leaked(db)).toEqual(forbidden);
      const hashed = { ...env, SYNC_PERSONAL_DATA: "hash", SYNC_PERSONAL_DATA_KEY: KEY };
      const first = await run(["rewrite-personal-data"], hashed);
      expect(first.stdout).toMatch(/rewrite-personal-data \(hash\): \d+ of \d+ bookings rewritten/);
      expect(leaked(db)).toEqual([]);
      // Hashes are not hashed again: a second run finds nothing to do.
      const twice = await run(["rewrite-personal-data"], hashed);
      expect(twice.stdout).toMatch(/: 0 of \d+ bookings rewritten, 0 rejected records/);
      await run(["rewrite-personal-data", "--personal-data", "drop"], env);
      expect(leaked(db)).toEqual([]);
      expect(fileBytes(db).includes("sha256:")).toBe(false);
    } finally {
      tmp.cleanup();
    }
  });
});
