/**
 * Quirks a source repeats on every answer must not fail every run when the mirror is complete
 * (DESIGN-NOTES invariant 11), and must still fail a run where bookings may be missing. The built CLI
 * (a subprocess) against `support/hostile-server.ts` with a quirk on from the start, a real SQLite file.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { type CliResult, describeIds, hostileEnv, readMirror, runCli, tail } from "./support/hostile-run.js";
import { type HostileOptions, type HostileServer, startHostileServer } from "./support/hostile-server.js";

const SEED = Number(process.env.HOSTILE_SEED ?? 7);

let cleanup: (() => Promise<void>) | undefined;
afterEach(async () => {
  await cleanup?.();
  cleanup = undefined;
});

async function world(options: Partial<HostileOptions>, env: Record<string, string> = {}) {
  const dir = mkdtempSync(join(tmpdir(), "booking-sync-quirks-"));
  const dbPath = join(dir, "bookings.db");
  const server = await startHostileServer({ seed: SEED, count: 1500, ...options });
  cleanup = async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  };
  const cli = (command = "sync", more: Record<string, string> = {}) =>
    runCli([command], hostileEnv(server, dbPath, { ...env, ...more }));
  return { server, dbPath, cli };
}

/** The last run's status and error text (a warning on a successful run) from sync_runs. */
function lastRun(dbPath: string): { status: string; error: string | null } {
  const db = new Database(dbPath, { readonly: true, fileMustExist: true });
  try {
    return db.prepare("SELECT status, error FROM sync_runs ORDER BY id DESC LIMIT 1").get() as {
      status: string;
      error: string | null;
    };
  } finally {
    db.close();
  }
}

/** Every keyed booking the source serves (of `type`, when given) is in `bookings`. */
function expectComplete(server: HostileServer, dbPath: string, r: CliResult, type?: "IN" | "LC"): void {
  const served = server.data
    .newestFirst()
    .filter((b) => !type || b.full.type === type)
    .map((b) => b.id);
  const { live } = readMirror(dbPath);
  const absent = served.filter((id) => !live.has(id));
  expect(absent, `absent: ${describeIds(absent, server)}\n${tail(r)}`).toEqual([]);
}

describe("a quirk the source repeats on every run", () => {
  it("hasMore: true and nextCursor: null on every page, the last page empty: exit 0 with a warning, every run", async () => {
    const { server, dbPath, cli } = await world({ quirks: { claimsMore: true } });
    for (const when of ["cold", "again"]) {
      // A lookback over the whole source, so the second run walks to the feed's end again too.
      const r = await cli("sync", { SYNC_LOOKBACK_SECONDS: "86400" });
      expect(r.code, `${when}\n${tail(r)}`).toBe(0);
      expectComplete(server, dbPath, r);
      expect(lastRun(dbPath), when).toMatchObject({
        status: "success",
        error: expect.stringMatching(/hasMore/),
      });
      server.data.add(120);
    }
  }, 120_000);

  it("the same on a typed stream, judged by the oldest booking's time", async () => {
    const { server, dbPath, cli } = await world(
      { quirks: { claimsMore: true } },
      { SYNC_BOOKING_TYPE: "IN" },
    );
    for (const when of ["cold", "again"]) {
      const r = await cli();
      expect(r.code, `${when}\n${tail(r)}`).toBe(0);
      expectComplete(server, dbPath, r, "IN");
      server.data.add(120);
    }
  }, 120_000);

  it("records without _id, counted in the source's total: quarantined, and exit 0 every run", async () => {
    const { server, dbPath, cli } = await world({ quirks: { withoutIdEvery: 97 } });
    for (const when of ["cold", "again", "third"]) {
      const r = await cli();
      expect(r.code, `${when}\n${tail(r)}`).toBe(0);
      const keyed = server.data.newestFirst().filter((b) => b.index % 97 !== 0);
      const { live } = readMirror(dbPath);
      const absent = keyed.map((b) => b.id).filter((id) => !live.has(id));
      expect(absent, `${when}: ${describeIds(absent, server)}\n${tail(r)}`).toEqual([]);
      expect(lastRun(dbPath).error, when).toMatch(/without a usable _id/);
      server.data.add(100);
    }
  }, 120_000);

  it("records without _id inside tie runs the feed cannot page through: exit 0 every run", async () => {
    // Seven bookings a millisecond and pages of five: every millisecond is a tie run read on the list.
    const startMs = Math.floor(Date.now() / 60_000) * 60_000 - 7_200_000;
    const trueUsOf = (i: number) => (startMs + Math.floor(i / 7)) * 1000 + (i % 7) * 137;
    const quirks = { withoutIdEvery: 11 };
    const { server, dbPath, cli } = await world({ count: 200, precision: "us", trueUsOf, quirks });
    for (const when of ["cold", "again"]) {
      const r = await cli("sync", { SYNC_PAGE_SIZE: "5" });
      expect(r.code, `${when}\n${tail(r)}`).toBe(0);
      const keyed = server.data.newestFirst().filter((b) => b.index % 11 !== 0);
      const absent = keyed.map((b) => b.id).filter((id) => !readMirror(dbPath).live.has(id));
      expect(absent, `${when}: ${describeIds(absent, server)}\n${tail(r)}`).toEqual([]);
      server.data.add(30);
    }
  }, 120_000);

  it("both quirks at once, then a reconcile and a sync: exit 0 every time", async () => {
    const { server, dbPath, cli } = await world({ quirks: { claimsMore: true, withoutIdEvery: 97 } });
    for (const command of ["sync", "sync", "reconcile", "sync"]) {
      const r = await cli(command);
      expect(r.code, `${command}\n${tail(r)}`).toBe(0);
    }
    const keyed = server.data.newestFirst().filter((b) => b.index % 97 !== 0);
    expect(keyed.filter((b) => !readMirror(dbPath).live.has(b.id))).toEqual([]);
  }, 120_000);

  it("one record over the response-body cap on every request: it costs only itself, every run", async () => {
    const quirks = { hugeIndex: 700, hugeBytes: 3 * 1024 * 1024 };
    const { server, dbPath, cli } = await world({ quirks }, { SYNC_MAX_RESPONSE_MB: "1" });
    const huge = server.data.newestFirst().find((b) => b.index === 700)?.id;
    for (const command of ["sync", "sync", "reconcile", "backfill"]) {
      const r = await cli(command);
      expect(r.code, `${command}\n${tail(r)}`).toBe(0);
      expectComplete(server, dbPath, r);
      expect(r.stderr, command).not.toMatch(/response body over/);
    }
    expect(readMirror(dbPath).live.has(huge as string)).toBe(true);
  }, 120_000);

  it("still fails where bookings may be missing: empty pages that claim more from mid-walk on", async () => {
    const { server, dbPath, cli } = await world({ quirks: { claimsMore: true } });
    server.setFault("emptyPage", { page: 4, persistent: true });
    const r = await cli();
    expect(r.code, tail(r)).toBe(1);
    expect(r.stderr).toMatch(/empty page|hasMore|did not serve again/i);
    expect(readMirror(dbPath).checkpoint).toBeNull();
    server.heal();
    const healed = await cli();
    expect(healed.code, tail(healed)).toBe(0);
    expectComplete(server, dbPath, healed);
  }, 120_000);

  it("a typed stream still fails where bookings may be missing", async () => {
    const { server, dbPath, cli } = await world(
      { quirks: { claimsMore: true } },
      { SYNC_BOOKING_TYPE: "IN" },
    );
    server.setFault("emptyPage", { page: 3, persistent: true });
    const r = await cli();
    expect(r.code, tail(r)).toBe(1);
    const db = new Database(dbPath, { readonly: true });
    const checkpoint = db.prepare("SELECT checkpoint FROM sync_state WHERE stream = 'feed:IN'").pluck().get();
    db.close();
    expect(checkpoint ?? null).toBeNull();
  }, 120_000);
});
