/**
 * `booking-sync status` and the status page on each backend, as users run them: the CLI as a
 * subprocess (the build in dist/) and the page over real HTTP, against a mirror filled by real syncs
 * from the simulator, their figures checked against our own queries on a connection of our own.
 */
import Database from "better-sqlite3";
import pg from "pg";
import { afterEach, expect, it } from "vitest";
import type { HttpServerHandle } from "../src/daemon/http.js";
import { startSimulator } from "../src/simulator/index.js";
import { DAILY_DAYS, lagosDays } from "../src/store/daily.js";
import { redactUrl } from "../src/store/postgres/connect.js";
import type { Status } from "../src/store/status.js";
import { type DaemonProcess, freePort, type LogLine, spawnDaemon } from "./support/daemon-process.js";
import type { CliResult, HarnessOptions } from "./support/harness.js";
import { runCli } from "./support/harness.js";
import { type MirrorHarness, type MirrorSql, mirrorHarness, mirrorSql } from "./support/mirror-harness.js";
import { type Backend, type BackendKind, describeBackends } from "./support/postgres.js";
import { chart, figure, personalValuesIn, serveStatusPage } from "./support/status-page.js";

// As in status-page.test.ts: 300 bookings 97 minutes apart from 21:00 UTC on 1 May 2025, read on 25 May.
const DATA = { bookings: 300, seed: 11, epochMs: Date.UTC(2025, 4, 1, 21, 0), spacingMs: 97 * 60_000 };
const AT = new Date("2025-05-25T12:00:00.000Z");
const HOUR_MS = 3_600_000;
const NEVER = "0 0 1 1 *";

let h: MirrorHarness | undefined;
let sql: MirrorSql | undefined;
let daemon: DaemonProcess | undefined;
const servers: HttpServerHandle[] = [];
afterEach(async () => {
  if (daemon && daemon.child.exitCode === null && daemon.child.signalCode === null)
    daemon.child.kill("SIGKILL");
  await daemon?.exited;
  await Promise.all(servers.splice(0).map((s) => s.close()));
  await sql?.close();
  await h?.close();
  daemon = sql = h = undefined;
});

/** The mirror's settings for a subprocess: the database alone, nothing of the API. */
function dbEnv(kind: BackendKind, location: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: "info" };
  for (const name of Object.keys(env)) if (/^BOOKING_(API|DB)_/.test(name)) delete env[name];
  if (kind === "sqlite") env.BOOKING_DB_PATH = location;
  else env.BOOKING_DB_URL = location;
  return env;
}

const count = (n: number) => n.toLocaleString("en-US");
const lagosDay = (createdAt: string) => new Date(Date.parse(createdAt) + HOUR_MS).toISOString().slice(0, 10);

describeBackends("booking-sync status", (backend) => {
  /** The harness, and the mirror's location unredacted (the URL with any password), for the CLI. */
  async function start(options: HarnessOptions) {
    let location = "";
    const recorded: Backend = { kind: backend.kind, url: async () => (location = await backend.url()) };
    h = await mirrorHarness(recorded, options);
    const status = (...args: string[]) => runCli(["status", ...args], dbEnv(backend.kind, location));
    return { h, location, status };
  }

  function parsed(r: CliResult): Status & { check: unknown } {
    expect(r.stderr).toBe("");
    return JSON.parse(r.stdout);
  }

  it("--json agrees with the database: counts, checkpoints, runs, rejects and drift", async () => {
    const { h, location, status } = await start({ bookings: 300 });
    h.sim.inject([{ kind: "malformed", count: 2 }], { path: "feed" });
    expect((await h.sync()).status).toBe("success");
    expect((await h.sync({ details: true, detailsMaxPages: 1 })).status).toBe("success");
    await h.execute(
      "UPDATE bookings SET missing_since = '2026-01-01T00:00:00.000Z' WHERE id IN (SELECT id FROM bookings ORDER BY id LIMIT 7)",
    );

    const r = await status("--json");
    expect(r.code).toBe(0);
    const s = parsed(r);
    const one = async (text: string) => Object.values((await h.query(text))[0] ?? {})[0];

    expect(s.database).toMatchObject(
      backend.kind === "sqlite"
        ? { path: location, backend: "sqlite" }
        : { path: redactUrl(location), walBytes: 0, backend: "postgres" },
    );
    expect(s.database.bytes).toBeGreaterThan(0);
    expect(s.bookings).toEqual({
      total: await one("SELECT count(*) FROM bookings"),
      withDetails: await one("SELECT count(*) FROM bookings WHERE detail_synced_at IS NOT NULL"),
      missing: await one("SELECT count(*) FROM bookings WHERE missing_since IS NOT NULL"),
      withProblems: await one(
        "SELECT count(*) FROM bookings WHERE summary_problems IS NOT NULL OR detail_problems IS NOT NULL",
      ),
      detailsNotFound: await one(
        "SELECT count(*) FROM bookings WHERE details_seek_after IS NOT NULL AND detail_synced_at IS NULL",
      ),
    });
    expect(typeof s.bookings.total).toBe("number");
    // Not trivially zero or all-equal: the check above would then prove little.
    expect(s.bookings.total).toBeGreaterThan(250);
    expect(s.bookings.withDetails).toBeGreaterThan(0);
    expect(s.bookings.withDetails).toBeLessThan(s.bookings.total);
    expect(s.bookings.missing).toBe(7);
    // The keyless record is quarantined; the one with a string amount is a booking with its problem.
    expect(s.rejects).toBe(await one("SELECT count(*) FROM rejected_records"));
    expect(s.rejects).toBe(1);
    // The next sync's lookback read it again, served clean: its note is gone.
    expect(s.bookings.withProblems).toBe(0);

    const state = await h.query<{ stream: string; checkpoint: string | null; progress: number }>(
      `SELECT stream, checkpoint, CASE WHEN progress_json IS NULL THEN 0 ELSE 1 END AS progress
       FROM sync_state ORDER BY stream`,
    );
    expect(
      s.streams.map(({ stream, checkpoint, inProgress }) => ({ stream, checkpoint, inProgress })),
    ).toEqual(state.map(({ progress, ...r }) => ({ ...r, inProgress: progress === 1 })));
    // The details pass stopped after one page: one stream in progress, one not, both read right.
    expect(new Set(s.streams.map((st) => st.inProgress))).toEqual(new Set([true, false]));
    const feed = s.streams.find((st) => st.stream === "feed");
    expect(feed?.checkpointAgeSeconds).toBe(
      Math.round((Date.parse(s.at) - Date.parse(feed?.checkpoint ?? "")) / 1000),
    );

    const runs = await h.query(
      "SELECT id, kind, status, bookings_new AS new FROM sync_runs ORDER BY id DESC LIMIT 5",
    );
    expect(s.runs.map(({ id, kind, status, new: n }) => ({ id, kind, status, new: n }))).toEqual(runs);
    expect(s.runs[0]?.durationSeconds).toBeGreaterThan(0);
    const [success] = await h.query<{ id: number; at: string }>(
      "SELECT id, finished_at AS at FROM sync_runs WHERE kind = 'sync' AND status = 'success' ORDER BY id DESC",
    );
    expect(s.lastSuccess).toMatchObject({ runId: success?.id, finishedAt: success?.at });
    const [drift] = await h.query<{ id: number; src: number; loc: number }>(
      "SELECT id, source_total AS src, local_total AS loc FROM sync_runs WHERE source_total IS NOT NULL ORDER BY id DESC",
    );
    expect(s.drift).toMatchObject({
      runId: drift?.id,
      sourceTotal: drift?.src,
      localTotal: drift?.loc,
      difference: (drift?.src ?? 0) - (drift?.loc ?? 0),
    });
    expect(s.check).toBeNull();

    const text = await status();
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(s.database.path);
    expect(text.stdout).toMatch(new RegExp(`^bookings\\s+${s.bookings.total} total · `, "m"));
  });

  it("--max-age passes right after a sync and exits 1 once the last success is older", async () => {
    const { h, status } = await start({ bookings: 50 });
    expect((await status("--max-age", "1h")).code).toBe(1); // never synced
    await h.sync();
    expect((await status("--max-age", "1h")).code).toBe(0);

    const anHourAgo = new Date(Date.now() - 3_600_000).toISOString();
    await h.execute("UPDATE sync_runs SET finished_at = $1 WHERE status = 'success'", [anHourAgo]);
    const r = await status("--max-age", "1s");
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`mirror is stale: the last successful sync finished at ${anHourAgo}`);
    const j = await status("--json", "--max-age", "15m");
    expect(j.code).toBe(1);
    expect(JSON.parse(j.stdout)).toMatchObject({ check: { maxAgeSeconds: 900, stale: true } });
    expect((await status("--max-age", "2h")).code).toBe(0);
  });

  it("shows the events stream: its newest id alone without a webhook; then cursor, lag, error and drops", async () => {
    const { h, status } = await start({ bookings: 120 });
    expect((await h.sync()).status).toBe("success");
    const ids = async () =>
      (await h.query<{ id: number; at: string }>("SELECT id, at FROM booking_events ORDER BY id")).map(
        (r) => ({ id: Number(r.id), at: r.at }),
      );
    const before = await ids();
    expect(before).toHaveLength(120); // one booking.created per booking the page saved
    let s = parsed(await status("--json"));
    expect(s.events).toEqual({ lastId: 120, oldest: before[0], delivery: null });
    let text = (await status()).stdout;
    expect(text).toMatch(
      new RegExp(
        `^events\\s+last id 120 · kept from id ${before[0]?.id} \\(${before[0]?.at}\\) · no webhook configured$`,
        "m",
      ),
    );
    expect(text).not.toMatch(/^(webhook|DROPPED) /m);

    // The webhook's state as the delivery loop and retention write it: delivered to 30, failing;
    // then past a cap of 50 undelivered, the oldest 40 dropped (the cursor moves to 70).
    const failedAt = new Date(Date.now() - 5_000).toISOString();
    const nextAt = new Date(Date.now() + 60_000).toISOString();
    await h.mirror.events.saveDelivery({ endpoint: "ab".repeat(32), cursor: 30, lastDeliveredAt: failedAt });
    const error = "HTTP 503 from 127.0.0.1:9";
    await h.mirror.events.saveDelivery({
      attempts: 3,
      lastError: error,
      lastErrorAt: failedAt,
      nextAttemptAt: nextAt,
    });
    const dropAt = new Date().toISOString();
    expect(await h.mirror.events.pruneEvents("2000-01-01T00:00:00.000Z", 50, true, dropAt)).toEqual({
      pruned: 0,
      dropped: 40,
    });
    const after = await ids();
    const firstWaiting = after.find((e) => e.id > 70);
    s = parsed(await status("--json"));
    const lag = Math.round((Date.parse(s.at) - Date.parse(firstWaiting?.at ?? "")) / 1000);
    expect(s.events).toEqual({
      lastId: 120,
      oldest: after[0],
      delivery: {
        cursor: 70,
        lagEvents: 50,
        lagSeconds: lag,
        attempts: 3,
        lastError: error,
        lastErrorAt: failedAt,
        nextAttemptAt: nextAt,
        lastDeliveredAt: failedAt,
        dropped: 40,
        droppedAt: dropAt,
      },
    });
    text = (await status()).stdout;
    expect(text).toMatch(
      new RegExp(
        `^DROPPED\\s+40 undelivered events dropped past EVENTS_MAX_UNDELIVERED, last at ${dropAt}$`,
        "m",
      ),
    );
    expect(text).toMatch(/^events\s+last id 120 · kept from id 1 /m);
    // Read again a moment later: the lag in seconds may have grown by one.
    expect(text).toMatch(/^webhook\s+delivered to id 70 · lag 50 events, \d+s · last error /m);
    expect(text).toContain(`last error ${failedAt}: ${error} · next attempt ${nextAt} (attempt 4)`);
  });

  it("still shows a mirror made before the events tables: events none, exit 0", async () => {
    const { h, status } = await start({ bookings: 20 });
    expect((await h.sync()).status).toBe("success");
    for (const table of ["event_replays", "event_delivery", "booking_events"])
      await h.execute(`DROP TABLE ${table}`);
    const r = await status("--json");
    expect(r.code).toBe(0);
    expect(parsed(r)).toMatchObject({ bookings: { total: 20 }, events: null });
    const text = await status();
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^events\s+none: this mirror predates them/m);
  });

  it("refuses a database without the mirror's tables with exit 2, and creates none", async () => {
    const location = await backend.url();
    if (backend.kind === "sqlite") new Database(location).close();
    const r = await runCli(["status"], dbEnv(backend.kind, location));
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("has no booking-sync tables");
    expect(r.stderr).toMatch(/^Try: .*`booking-sync migrate`$/m);
    expect(await tablesIn(backend.kind, location)).toBe(0);
  });
});

/** How many tables the database at `location` holds, in any schema but the system's. */
async function tablesIn(kind: BackendKind, location: string): Promise<number> {
  if (kind === "sqlite") {
    const db = new Database(location, { readonly: true });
    try {
      return db.prepare("SELECT count(*) FROM sqlite_master WHERE type = 'table'").pluck().get() as number;
    } finally {
      db.close();
    }
  }
  const client = new pg.Client({ connectionString: location });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: number }>(
      "SELECT count(*)::integer AS n FROM pg_tables WHERE schemaname NOT IN ('pg_catalog', 'information_schema')",
    );
    return rows[0]?.n ?? -1;
  } finally {
    await client.end();
  }
}

describeBackends("the status page", (backend) => {
  it("says a run of failed syncs, the details pass's state, and an overflowed sum, on either database", async () => {
    h = await mirrorHarness(backend, DATA);
    expect((await h.sync({ details: true })).status).toBe("success");
    for (let i = 0; i < 3; i++) {
      h.sim.inject({ kind: "401" }, { path: "feed" });
      expect((await h.sync()).status).toBe("failed");
    }
    const failed = await h.query<{ id: number; at: string }>(
      "SELECT id, started_at AS at FROM sync_runs WHERE status = 'failed' ORDER BY id",
    );
    // The oldest of the three failed for another reason: the newest two in a row share one error.
    await h.execute(`UPDATE sync_runs SET error = 'HTTP 502' WHERE id = ${Number(failed[0]?.id)}`);
    // Two bookings on one Lagos day whose amounts sum past the largest double.
    await h.execute(`UPDATE bookings SET total_amount = 1.7e308 WHERE id IN
      (SELECT id FROM bookings WHERE created_at >= '2025-05-20T00:00:00.000Z' ORDER BY id LIMIT 2)`);
    const { status, daily } = await h.mirror.readStatusPage(AT);
    expect(status.failing).toMatchObject({ since: failed[0]?.at, runs: 3, sameError: 2 });
    expect(status.failing?.error).toMatch(/401/);
    expect(status.streams.find((st) => st.stream === "details")?.note).toBe("every booking has details");
    expect(status.streams.find((st) => st.stream === "feed")?.note).toBeNull();
    const overflowed = daily.filter((d) => !Number.isFinite(d.totalAmount));
    expect(overflowed).toHaveLength(1);
    const [day] = await h.query<{ n: number }>(
      `SELECT count(*) AS n FROM bookings WHERE missing_since IS NULL AND total_amount = 1.7e308`,
    );
    expect(Number(day?.n)).toBe(2);
    // The other days keep their sums, and that day its count.
    expect(daily.filter((d) => d.totalAmount > 0).length).toBeGreaterThan(15);
    expect(overflowed[0]?.bookings).toBeGreaterThanOrEqual(2);
  });

  it("counts a failing streak longer than the rows it reads: 150 failed syncs since the last success", async () => {
    h = await mirrorHarness(backend, DATA);
    expect((await h.sync()).status).toBe("success");
    for (let i = 0; i < 150; i++) {
      const started = new Date(Date.UTC(2025, 4, 26, 0, i)).toISOString();
      const error = i < 20 ? "HTTP 502" : "HTTP 401";
      await h.execute(
        `INSERT INTO sync_runs (kind, stream, started_at, finished_at, status, error)
         VALUES ('sync', 'feed', '${started}', '${started}', 'failed', '${error}')`,
      );
    }
    const { status } = await h.mirror.readStatusPage(AT);
    expect(status.failing).toEqual({
      since: "2025-05-26T00:00:00.000Z",
      runs: 150,
      error: "HTTP 401",
      sameError: 100,
    });
  });

  it("GET / shows the mirror's figures and 30 bars a chart, and no person's data", async () => {
    h = await mirrorHarness(backend, DATA);
    h.sim.inject([{ kind: "malformed", count: 2 }], { path: "feed" });
    expect((await h.sync({ details: true })).status).toBe("success");
    await h.execute(
      "UPDATE bookings SET missing_since = '2025-05-24T00:00:00.000Z' WHERE id IN (SELECT id FROM bookings ORDER BY id LIMIT 5)",
    );
    const mirror = h.mirror;
    const { server } = await serveStatusPage(() => mirror.readStatusPage(AT));
    servers.push(server);
    const res = await fetch(`${server.url}/`);
    expect(res.status).toBe(200);
    const page = await res.text();

    const one = async (text: string) => Number(Object.values((await h?.query(text))?.[0] ?? {})[0]);
    expect(figure(page, "bookings-total")).toBe(count(await one("SELECT count(*) FROM bookings")));
    expect(figure(page, "bookings-details")).toBe(
      count(await one("SELECT count(*) FROM bookings WHERE detail_synced_at IS NOT NULL")),
    );
    expect(figure(page, "bookings-missing")).toBe("5");
    expect(figure(page, "rejects")).toBe("1");
    expect(figure(page, "bookings-problems")).toBe("1");
    expect(figure(page, "drift-source")).toBe(
      count(await one("SELECT source_total FROM sync_runs WHERE source_total IS NOT NULL ORDER BY id DESC")),
    );

    // Each Lagos day's bookings and revenue, from the rows the source still serves.
    const rows = await h.query<{ created_at: string; total_amount: number | null }>(
      "SELECT created_at, total_amount FROM bookings WHERE missing_since IS NULL",
    );
    const want = new Map<string, { bookings: number; totalAmount: number }>();
    for (const r of rows) {
      const w = want.get(lagosDay(r.created_at)) ?? { bookings: 0, totalAmount: 0 };
      w.bookings++;
      w.totalAmount += r.total_amount ?? 0;
      want.set(lagosDay(r.created_at), w);
    }
    const { daily } = await mirror.readStatusPage(AT);
    expect(daily.map((d) => d.day)).toEqual(lagosDays(DAILY_DAYS, AT));
    for (const d of daily) {
      const w = want.get(d.day) ?? { bookings: 0, totalAmount: 0 };
      expect(d.bookings, d.day).toBe(w.bookings);
      expect(Math.abs(d.totalAmount - w.totalAmount), d.day).toBeLessThan(0.01);
      expect(Math.round(d.totalAmount * 100), d.day).toBeCloseTo(d.totalAmount * 100, 6);
    }
    expect(daily.reduce((s, d) => s + d.bookings, 0)).toBe(rows.length);
    expect(figure(page, "chart-bookings-total")).toBe(count(rows.length));
    for (const id of ["bookings", "revenue"]) {
      const svg = chart(page, id);
      expect(svg.match(/<rect /g), id).toHaveLength(30);
      expect(svg, id).toContain('height="0"'); // the empty days
    }
    const bookings = chart(page, "bookings");
    for (const d of daily)
      expect(bookings).toContain(`<title>${d.day}: ${count(d.bookings)} bookings</title>`);

    const values = await personalValuesIn(h.query, 12);
    expect(values.length).toBeGreaterThan(40);
    for (const value of [...values, "sim-token"]) expect(page, value).not.toContain(value);
  });

  it("`booking-sync run` serves GET / for this database", async () => {
    const location = await backend.url();
    const sim = await startSimulator({ seed: 11, bookings: 200 });
    try {
      const port = await freePort();
      daemon = spawnDaemon({
        ...dbEnv(backend.kind, location),
        BOOKING_API_BASE_URL: sim.url,
        BOOKING_API_TOKEN: "sim-token",
        HTTP_PORT: String(port),
        SYNC_SCHEDULE: NEVER,
      });
      await daemon.waitForLog((l: LogLine) => l.msg === "sync finished" && l.status === "success", "a sync");
      const res = await fetch(`http://127.0.0.1:${port}/`);
      expect(res.status).toBe(200);
      const page = await res.text();
      sql = mirrorSql(backend.kind, location);
      const [row] = await sql.query<{ n: number }>("SELECT count(*) AS n FROM bookings");
      expect(row?.n).toBe(200);
      expect(figure(page, "bookings-total")).toBe("200");
      expect(figure(page, "chart-bookings-total")).toBe("200");
      for (const id of ["bookings", "revenue"]) expect(chart(page, id).match(/<rect /g)).toHaveLength(30);
      daemon.child.kill("SIGTERM");
      expect((await daemon.exited).code).toBe(0);
    } finally {
      await sim.close();
    }
  });
});
