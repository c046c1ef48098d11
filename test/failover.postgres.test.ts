/**
 * Fail-over of the writer lease in PostgreSQL, as operators run it: two `booking-sync run` daemons
 * on one database, the holder SIGKILLed in the middle of its cold sync while the source keeps taking
 * new bookings. The standby must take over within seconds, finish the walk the dead one left, and
 * end with the mirror holding exactly the source's bookings. FAILOVER_SEED picks the data set.
 */
import { randomInt } from "node:crypto";
import pg from "pg";
import { afterEach, describe, expect, it, onTestFailed } from "vitest";
import { type Simulator, startSimulator } from "../src/simulator/index.js";
import {
  type DaemonProcess,
  freePort,
  http,
  type LogLine,
  pollUntil,
  spawnDaemon,
} from "./support/daemon-process.js";
import { type FreshDatabase, freshPostgresDatabase, postgresAvailable } from "./support/postgres.js";

const SEED = Number(process.env.FAILOVER_SEED ?? randomInt(1, 1_000_000));
/** Enough for a cold sync of several seconds at this latency, so the kill lands mid-walk. */
const BOOKINGS = 30_000;
const LATENCY_MS = 10;
/** Live inserts while the daemons run: this many every INSERT_EVERY_MS, at most INSERT_MAX in all. */
const INSERT_BATCH = 3;
const INSERT_EVERY_MS = 200;
const INSERT_MAX = 450;
/** The stated bound on kill-to-take-over; the design is one LEASE_RETRY_MS (2 s). */
const TAKEOVER_BOUND_MS = 10_000;
/** Generous for a loaded 2-core machine: a hang still fails well inside the test's timeout. */
const WAIT_MS = 40_000;

/** The line a sync run ends with: finished, failed or stopped. */
const runEnded = (l: LogLine) => l.msg === "sync finished" || /^sync (failed|stopped)/.test(String(l.msg));
const tookOver = (l: LogLine) => l.msg === "took the writer lease; syncing";
const standingBy = (pid: number) => (l: LogLine) =>
  String(l.msg).startsWith(`waiting for the writer lease held by pid ${pid} on host `) &&
  String(l.msg).endsWith("; standing by");

let db: FreshDatabase | undefined;
let sim: Simulator | undefined;
let client: pg.Client | undefined;
let inserter: NodeJS.Timeout | undefined;
const daemons: DaemonProcess[] = [];
afterEach(async () => {
  clearInterval(inserter);
  for (const d of daemons.splice(0)) {
    if (d.child.exitCode === null && d.child.signalCode === null) d.child.kill("SIGKILL");
    await d.exited;
  }
  await client?.end().catch(() => {});
  await sim?.close();
  await db?.drop();
  client = sim = db = undefined;
});

/** Polls `probe` (a database query) every 100 ms until it gives a value; rejects after `WAIT_MS`. */
async function until<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${WAIT_MS} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

interface RunRow {
  id: number;
  kind: string;
  status: string;
  started_at: string;
}

function tail(text: string): string {
  return text.trimEnd().split("\n").slice(-25).join("\n");
}

async function runs(): Promise<RunRow[]> {
  const { rows } = await (client as pg.Client).query<RunRow>(
    "SELECT id, kind, status, started_at FROM sync_runs ORDER BY id",
  );
  return rows;
}

describe.skipIf(!postgresAvailable())("writer fail-over (PostgreSQL)", () => {
  it("a standby takes the lease within seconds of the holder's SIGKILL mid-sync and completes the mirror", async () => {
    // Kept here: afterEach empties `daemons` before vitest calls this.
    const mine: DaemonProcess[] = [];
    onTestFailed(() => {
      console.log(`failover: FAILOVER_SEED=${SEED} reproduces this data set`);
      for (const [name, d] of mine.map((d, i) => [i === 0 ? "A" : "B", d] as const))
        console.log(`failover: daemon ${name} (pid ${d.pid}), last log lines:\n${tail(d.stderr())}`);
    });
    db = await freshPostgresDatabase();
    client = new pg.Client({ connectionString: db.url });
    await client.connect();
    // One second apart: the inserted bookings are dated around now, as live ones would be.
    sim = await startSimulator({ seed: SEED, bookings: BOOKINGS, latencyMs: LATENCY_MS, spacingMs: 1000 });
    const source = sim;
    const daemon = async () => {
      const port = await freePort();
      const d = spawnDaemon({
        ...process.env,
        BOOKING_API_BASE_URL: source.url,
        BOOKING_API_TOKEN: "sim-token",
        BOOKING_DB_URL: (db as FreshDatabase).url,
        HTTP_PORT: String(port),
        LOG_LEVEL: "info",
        SYNC_SCHEDULE: "*/2 * * * * *",
      });
      daemons.push(d);
      mine.push(d);
      return { d, url: `http://127.0.0.1:${port}` };
    };

    // A starts, takes the lease and saves its first pages.
    const a = await daemon();
    const started = Date.now();
    let inserted = 0;
    inserter = setInterval(() => {
      if (inserted >= INSERT_MAX) return;
      source.insert(INSERT_BATCH);
      inserted += INSERT_BATCH;
    }, INSERT_EVERY_MS);
    await until("A to hold the lease and save pages", async () => {
      const { rows } = await (client as pg.Client)
        .query<{ pid: number | null; n: number }>(
          `SELECT (SELECT pid FROM leases WHERE name = 'writer') AS pid,
            (SELECT count(*)::integer FROM bookings) AS n`,
        )
        // 42P01, undefined_table: A has not migrated the new database yet.
        .catch((err: { code?: string }) => (err.code === "42P01" ? { rows: [] } : Promise.reject(err)));
      return rows[0]?.pid === a.d.pid && (rows[0]?.n ?? 0) > 0 ? true : undefined;
    });

    // B starts beside it, finds the lease held, says so once and is not ready.
    const b = await daemon();
    await b.d.waitForLog(standingBy(a.d.pid), "B standing by");
    const waiting = await http(`${b.url}/readyz`);
    expect(waiting.status).toBe(503);
    expect(waiting.json).toMatchObject({ ready: false });
    expect(String(waiting.json?.reason)).toMatch(/^waiting for the writer lease held by pid \d+/);
    expect(String(waiting.json?.reason)).toContain(`pid ${a.d.pid} `);

    // A is still in its cold sync: its run is `running` and it never finished one.
    const running = (await runs()).filter((r) => r.status === "running");
    expect(running.map((r) => r.kind)).toEqual(["sync"]);
    const aRun = running[0] as RunRow;
    const killedAt = Date.now();
    a.d.child.kill("SIGKILL");
    expect((await a.d.exited).signal).toBe("SIGKILL");
    expect(a.d.lines.some((l) => l.msg === "sync finished")).toBe(false);
    const mirroredAtKill = (await client.query<{ n: number }>("SELECT count(*)::integer AS n FROM bookings"))
      .rows[0]?.n;

    // B takes over within the bound (timed by B's own log clock, not the test's event loop).
    const took = await b.d.waitForLog(tookOver, "B's take-over");
    const takeoverMs = (typeof took.time === "number" ? took.time : Date.now()) - killedAt;
    console.log(
      `failover: seed ${SEED}; A killed ${killedAt - started} ms after start with ${mirroredAtKill}/${BOOKINGS} ` +
        `bookings mirrored; B took the writer lease ${takeoverMs} ms after the kill`,
    );
    expect(takeoverMs).toBeLessThan(TAKEOVER_BOUND_MS);
    expect(b.d.lines.filter((l) => String(l.msg).includes("standing by"))).toHaveLength(1);

    // B finishes the walk A left while bookings keep arriving: that run must succeed, as every one of
    // B's runs must. Then the inserts stop and one more sync takes in the last of them.
    const interrupted = await b.d.waitForLog(
      (l) => String(l.msg).includes("as interrupted in sync_runs"),
      "B marking A's run interrupted",
    );
    expect(interrupted.runIds).toEqual([aRun.id]);
    const firstEnd = await b.d.waitForLog(runEnded, "the end of B's first sync");
    expect(firstEnd.msg).toBe("sync finished");
    clearInterval(inserter);
    const stoppedAt = new Date().toISOString();
    expect((await http(`${b.url}/sync`, { method: "POST" })).status).toBe(202);
    const last = await until("a sync B started after the inserts stopped", async () =>
      (await runs()).find((r) => r.kind === "sync" && r.status === "success" && r.started_at > stoppedAt),
    );
    console.log(
      `failover: ${inserted} bookings inserted live; B's first sync done in ${Number(firstEnd.durationMs)} ms; ` +
        `last sync (run ${last.id}) done ${Date.now() - started} ms after A started`,
    );
    expect(b.d.lines.filter((l) => runEnded(l) && l.msg !== "sync finished").map((l) => l.msg)).toEqual([]);
    const others = (await runs()).filter((r) => r.id !== aRun.id && r.status !== "running");
    expect(others.filter((r) => r.status !== "success")).toEqual([]);

    const mirror = (await client.query<{ id: string }>("SELECT id FROM bookings")).rows.map((r) => r.id);
    const sourceIds = new Set(source.allSummaries().map((s) => s._id));
    const mirrorIds = new Set(mirror);
    expect(mirror.length).toBe(mirrorIds.size);
    expect({
      missing: [...sourceIds].filter((id) => !mirrorIds.has(id)),
      extra: mirror.filter((id) => !sourceIds.has(id)),
    }).toEqual({ missing: [], extra: [] });
    expect(mirrorIds.size).toBe(BOOKINGS + inserted);
    expect((await runs()).find((r) => r.id === aRun.id)?.status).toBe("interrupted");
    await pollUntil(`${b.url}/readyz`, (r) => r.status === 200, { timeoutMs: WAIT_MS });

    b.d.child.kill("SIGTERM");
    expect(await b.d.exited).toEqual({ code: 0, signal: null });
  });
});
