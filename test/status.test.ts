/**
 * `booking-sync status` as a user runs it: a subprocess against a real mirror filled by real syncs
 * from the simulator, its figures checked against our own queries on a separate read-only connection.
 */
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { DEFAULT_BATCH } from "../src/store/batch.js";
import type { Status } from "../src/store/status.js";
import type { PartnerApi } from "../src/sync/ports.js";
import { fixedClock } from "./support/fakes.js";
import { analyst, type CliResult, type Harness, harness, runCli } from "./support/harness.js";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** The environment of a status check: the database path and nothing of the API. */
function statusEnv(dbPath: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, BOOKING_DB_PATH: dbPath, LOG_LEVEL: "info" };
  for (const name of Object.keys(env)) if (name.startsWith("BOOKING_API_")) delete env[name];
  return env;
}

const status = (dbPath: string, ...args: string[]) => runCli(["status", ...args], statusEnv(dbPath));

function parsed(r: CliResult): Status & { check: unknown } {
  expect(r.stderr).toBe("");
  return JSON.parse(r.stdout);
}

describe("booking-sync status", () => {
  it("--json agrees with the database: counts, checkpoints, runs, rejects and drift", async () => {
    h = await harness({ bookings: 300 });
    h.sim.inject([{ kind: "malformed", count: 2 }], { path: "feed" });
    expect((await h.sync()).status).toBe("success");
    expect((await h.sync({ details: true, detailsMaxPages: 1 })).status).toBe("success");
    h.store.db.exec(
      "UPDATE bookings SET missing_since = '2026-01-01T00:00:00.000Z' WHERE id IN (SELECT id FROM bookings LIMIT 7)",
    );

    const r = await status(h.dbPath, "--json");
    expect(r.code).toBe(0);
    const s = parsed(r);

    const db = analyst(h.dbPath);
    try {
      const one = (sql: string) => db.prepare(sql).pluck().get();
      expect(s.database.path).toBe(h.dbPath);
      expect(s.database.bytes).toBeGreaterThan(0);
      expect(typeof s.bookings.total).toBe("number");
      expect(s.bookings).toEqual({
        total: one("SELECT count(*) FROM bookings"),
        withDetails: one("SELECT count(*) FROM bookings WHERE detail_synced_at IS NOT NULL"),
        missing: one("SELECT count(*) FROM bookings WHERE missing_since IS NOT NULL"),
        withProblems: one("SELECT count(*) FROM bookings_v WHERE problems IS NOT NULL"),
        detailsNotFound: one(
          "SELECT count(*) FROM bookings WHERE details_seek_after IS NOT NULL AND detail_synced_at IS NULL",
        ),
      });
      // The figures are not trivially zero or all-equal: the check above would then prove little.
      expect(s.bookings.total).toBeGreaterThan(250);
      expect(s.bookings.withDetails).toBeGreaterThan(0);
      expect(s.bookings.withDetails).toBeLessThan(s.bookings.total);
      expect(s.bookings.missing).toBe(7);

      // Of the two malformed records, the keyless one is quarantined; the one with a string amount
      // is a booking with its problem noted.
      expect(s.rejects).toBe(one("SELECT count(*) FROM rejected_records"));
      expect(s.rejects).toBe(1);
      // The next sync's lookback read it again, served clean: its note is gone.
      expect(s.bookings.withProblems).toBe(0);

      const state = db.prepare("SELECT stream, checkpoint FROM sync_state ORDER BY stream").all();
      expect(s.streams.map(({ stream, checkpoint }) => ({ stream, checkpoint }))).toEqual(state);
      const feed = s.streams.find((st) => st.stream === "feed");
      const feedAge = (Date.parse(s.at) - Date.parse(feed?.checkpoint ?? "")) / 1000;
      expect(feed?.checkpointAgeSeconds).toBe(Math.round(feedAge));

      const runs = db
        .prepare("SELECT id, kind, status, bookings_new AS new FROM sync_runs ORDER BY id DESC LIMIT 5")
        .all();
      expect(s.runs.map(({ id, kind, status, new: n }) => ({ id, kind, status, new: n }))).toEqual(runs);
      expect(s.runs[0]?.durationSeconds).toBeGreaterThan(0);

      const lastSuccess = db
        .prepare(
          "SELECT id, finished_at AS at FROM sync_runs WHERE kind = 'sync' AND status = 'success' ORDER BY id DESC",
        )
        .get() as { id: number; at: string };
      expect(s.lastSuccess).toMatchObject({ runId: lastSuccess.id, finishedAt: lastSuccess.at });

      const drift = db
        .prepare(
          "SELECT id, source_total AS source, local_total AS local FROM sync_runs WHERE source_total IS NOT NULL ORDER BY id DESC",
        )
        .get() as { id: number; source: number; local: number };
      expect(s.drift).toMatchObject({
        runId: drift.id,
        sourceTotal: drift.source,
        localTotal: drift.local,
        difference: drift.source - drift.local,
      });
      expect(s.check).toBeNull();
    } finally {
      db.close();
    }
  });

  it("prints the path, the totals and the last runs for a terminal, without any API setting", async () => {
    h = await harness({ bookings: 120 });
    await h.sync();
    const r = await status(h.dbPath);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe("");
    expect(r.stdout).toContain(h.dbPath);
    expect(r.stdout).toMatch(/^bookings\s+120 total · 0 with details · 0 missing · 0 with problems$/m);
    expect(r.stdout).toMatch(/^drift\s+source 120 · mirror 120 · difference 0 /m);
    expect(r.stdout).toMatch(/^\s+1\s+sync\s+feed\s+success\s/m);
  });

  it("--max-age passes right after a sync and fails once the last success is older", async () => {
    h = await harness({ bookings: 50 });
    await h.sync();
    expect((await status(h.dbPath, "--max-age", "1h")).code).toBe(0);

    const anHourAgo = new Date(Date.now() - 3_600_000).toISOString();
    h.store.db.prepare("UPDATE sync_runs SET finished_at = ? WHERE status = 'success'").run(anHourAgo);
    const r = await status(h.dbPath, "--max-age", "1s");
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`mirror is stale: the last successful sync finished at ${anHourAgo}`);
    expect(r.stdout).toContain(h.dbPath);
    // Plain seconds read the same as `s`; two hours is still fresh enough.
    expect((await status(h.dbPath, "--max-age", "7200")).code).toBe(0);
  });

  it("--max-age fails on a mirror never synced, and says so; its JSON says why too", async () => {
    h = await harness({ bookings: 10 });
    const r = await status(h.dbPath, "--max-age", "1d");
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("never synced");
    expect(r.stdout).toMatch(/^synced\s+never synced$/m);
    const j = await status(h.dbPath, "--json", "--max-age", "15m");
    expect(j.code).toBe(1);
    expect(JSON.parse(j.stdout)).toMatchObject({
      lastSuccess: null,
      runs: [],
      bookings: { total: 0 },
      check: { maxAgeSeconds: 900, stale: true },
    });
  });

  it("a failed sync after the last success is named in the reason", async () => {
    h = await harness({ bookings: 10 });
    await h.sync();
    h.sim.inject({ kind: "401" }, { path: "feed" });
    expect((await h.sync()).status).toBe("failed");
    h.store.db.exec("UPDATE sync_runs SET finished_at = '2026-01-01T00:00:00.000Z' WHERE status = 'success'");
    const r = await status(h.dbPath, "--max-age", "90s");
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/; the last sync failed at \S+: .*401/);
  });

  it("puts a run of failed syncs first: since when, how many in a row, and the cause", async () => {
    h = await harness({ bookings: 30 });
    expect((await h.sync()).status).toBe("success");
    for (let i = 0; i < 3; i++) {
      h.sim.inject({ kind: "401" }, { path: "feed" });
      expect((await h.sync()).status).toBe("failed");
    }
    const first = h.store.db
      .prepare("SELECT started_at FROM sync_runs WHERE status = 'failed' ORDER BY id")
      .pluck()
      .get() as string;
    const r = await status(h.dbPath);
    expect(r.code).toBe(0);
    expect(r.stdout.split("\n")[0]).toMatch(
      new RegExp(`^FAILING\\s+failing since ${first}: 3 runs in a row: \\S.*401`),
    );
    expect(parsed(await status(h.dbPath, "--json")).failing).toMatchObject({
      since: first,
      runs: 3,
      sameError: 3,
    });
    expect((await h.sync()).status).toBe("success");
    const after = await status(h.dbPath);
    expect(after.stdout).not.toMatch(/^FAILING/m);
    expect(parsed(await status(h.dbPath, "--json")).failing).toBeNull();
  });

  it("says the details pass has nothing left when every booking has details", async () => {
    h = await harness({ bookings: 60 });
    expect((await h.sync({ details: true })).status).toBe("success");
    const r = await status(h.dbPath);
    expect(r.stdout).toMatch(/^\s+details\s+every booking has details\s*$/m);
    h.store.db.exec(
      "UPDATE bookings SET detail_synced_at = NULL WHERE id IN (SELECT id FROM bookings LIMIT 4)",
    );
    expect((await status(h.dbPath)).stdout).toMatch(/^\s+details\s+4 bookings without details\s*$/m);
  });

  it("after a backfill, shows the drift it checked against the source's list total", async () => {
    h = await harness({ bookings: 120 });
    const b = await runCli(["backfill"], h.env());
    expect(b.code, b.stderr).toBe(0);
    const r = await status(h.dbPath);
    expect(r.stdout).toMatch(/^drift\s+source 120 · mirror 120 · difference 0 \(run 1, /m);
    expect(parsed(await status(h.dbPath, "--json")).drift).toMatchObject({
      sourceTotal: 120,
      localTotal: 120,
    });
  });

  it("bad usage exits 2 with a hint: a bad duration, an unknown flag, a missing database", async () => {
    h = await harness({ bookings: 10 });
    const bad = await status(h.dbPath, "--max-age", "nonsense");
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--max-age = "nonsense" is not valid');
    expect(bad.stderr).toMatch(/^Try: booking-sync status --max-age 15m$/m);
    expect(bad.stdout).toBe("");

    expect((await status(h.dbPath, "--max-age", "0")).code).toBe(2);
    expect((await status(h.dbPath, "--no-such-flag")).code).toBe(2);

    const missing = join(h.dir, "nowhere.db");
    const r = await status(missing);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`database ${missing} does not exist`);
  });

  it("fails with exit 1 on a PostgreSQL mirror it cannot reach, naming it without its password", async () => {
    const env = {
      ...statusEnv("./unused.db"),
      BOOKING_DB_URL: "postgres://sync:hunter2@127.0.0.1:1/bookings",
    };
    const r = await runCli(["status"], env);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /^booking-sync: open database postgres:\/\/sync:\*\*\*@127\.0\.0\.1:1\/bookings: /m,
    );
    expect(r.stderr).not.toContain("hunter2");
    expect(r.stdout).toBe("");
  });

  it("reads while a sync is running, inside its open write transaction", async () => {
    // The store's batches commit only when this test moves its clock (or the run ends), so the
    // status subprocess, however slow to start, runs while a batch is open.
    const clock = fixedClock(Date.now());
    let during: { cli: Promise<CliResult>; total: number; writing: boolean; after?: boolean } | undefined;
    let committedOne = false;
    h = await harness({
      bookings: 300,
      pageSize: 50,
      storeClock: clock,
      // At a feed request while a saved page waits for its commit: the first time, its time is up;
      // the second time, status reads.
      wrapApi: (api): PartnerApi => ({
        fetchRecent: async (q, s) => {
          if (!during && h?.store.db.inTransaction) {
            if (!committedOne) {
              committedOne = true;
              clock.advance(DEFAULT_BATCH.ms);
            } else {
              const reader = analyst(h.dbPath);
              const total = reader.prepare("SELECT count(*) FROM bookings").pluck().get() as number;
              reader.close();
              during = { cli: status(h.dbPath, "--json"), total, writing: h.store.db.inTransaction };
              await during.cli;
              during.after = h.store.db.inTransaction;
            }
          }
          return api.fetchRecent(q, s);
        },
        listBookings: (q, s) => api.listBookings(q, s),
      }),
    });
    expect((await h.sync()).status).toBe("success");
    // Open before the subprocess started and still open once it exited: it read inside the batch.
    expect(during).toMatchObject({ writing: true, after: true });
    const r = await (during?.cli as Promise<CliResult>);
    expect(r.code).toBe(0);
    const s = parsed(r);
    expect(s.runs[0]).toMatchObject({ status: "running", finishedAt: null, durationSeconds: null });
    // What the moved clock committed, not the open batch's pages, nor the whole source.
    expect(during?.total).toBeGreaterThan(0);
    expect(during?.total).toBeLessThan(300);
    expect(s.bookings.total).toBe(during?.total);
  });
});
