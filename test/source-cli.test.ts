/**
 * The case through the built CLI, as a subprocess: a mirror of 300 bookings pointed at
 * another source of 10 (another simulator: another URL, or another data set on the same URL).
 * Every command refuses with exit 2 and writes nothing; `adopt-source` is the deliberate way on;
 * a reconcile that would then mark all 300 missing marks none and exits 1 until `--apply-missing`.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { type Simulator, startSimulator } from "../src/simulator/index.js";
import { freePort, http, spawnDaemon } from "./support/daemon-process.js";
import { analyst, type CliResult, type Harness, harness, runCli } from "./support/harness.js";

let h: Harness | undefined;
const sims: Simulator[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const sim of sims.splice(0)) await sim.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  await h?.close();
  h = undefined;
});

/** A schedule that never fires during a test: the daemon runs once at start-up. */
const NEVER = "0 0 1 1 *";

async function simulator(options: Parameters<typeof startSimulator>[0]): Promise<Simulator> {
  const sim = await startSimulator(options);
  sims.push(sim);
  return sim;
}

function mirror(dbPath: string): { ids: string[]; missing: number } {
  const db = analyst(dbPath);
  try {
    const ids = db.prepare("SELECT id FROM bookings ORDER BY id").pluck().all() as string[];
    const missing = db.prepare("SELECT count(*) FROM bookings WHERE missing_since IS NOT NULL").pluck().get();
    return { ids, missing: missing as number };
  } finally {
    db.close();
  }
}

/** Deletes the `source` row (`null`: a mirror made before sources were remembered) or sets its text. */
function editSourceRow(dbPath: string, text: string | null): void {
  const db = new Database(dbPath);
  try {
    if (text === null) db.prepare("DELETE FROM sync_state WHERE stream = 'source'").run();
    else db.prepare("UPDATE sync_state SET progress_json = ? WHERE stream = 'source'").run(text);
  } finally {
    db.close();
  }
}

async function statusJson(env: NodeJS.ProcessEnv): Promise<Record<string, unknown>> {
  const r = await runCli(["status", "--json"], env);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as Record<string, unknown>;
}

/** The refusal: exit 2, both addresses named, the way on, never the token. */
function expectRefused(r: CliResult, ...names: string[]): void {
  expect(r.code, r.stderr).toBe(2);
  for (const name of names) expect(r.stderr).toContain(name);
  expect(r.stderr).toContain("Try: booking-sync adopt-source");
  expect(r.stderr).not.toContain("sim-token");
}

describe("one mirror, one source", () => {
  it("refuses another source's URL on every command, adopts it when asked, then withholds the mass marking", async () => {
    h = await harness({ bookings: 300 });
    const mine = h.env({ LOG_LEVEL: "warn" });
    expect((await runCli(["sync"], mine)).code).toBe(0);
    const before = mirror(h.dbPath);
    const other = await simulator({ seed: 2, bookings: 10 });
    const theirs = { ...mine, BOOKING_API_BASE_URL: other.url };

    for (const command of [["sync"], ["reconcile"], ["backfill"]])
      expectRefused(await runCli(command, theirs), `mirrors ${h.sim.url}`, `not ${other.url}`);
    const daemon = await runCli(["run"], { ...theirs, HTTP_PORT: "0", SYNC_SCHEDULE: NEVER });
    expectRefused(daemon, other.url);
    expect(other.stats.requests).toBe(0);
    expect(mirror(h.dbPath)).toEqual(before);
    expect(await statusJson(mine)).toMatchObject({ source: { baseUrl: h.sim.url } });

    const adopt = await runCli(["adopt-source"], theirs);
    expect(adopt.code, adopt.stderr).toBe(0);
    expect(adopt.stdout).toContain(`mirrors ${other.url} from now on; it mirrored ${h.sim.url}`);

    const held = await runCli(["reconcile"], theirs);
    expect(held.code, held.stderr).toBe(1);
    expect(held.stdout).toMatch(/^reconcile all: 10 new, .* nothing marked missing \(300 withheld\)/);
    expect(held.stderr).toContain("300 of 300 bookings (100%) would be marked missing");
    expect(held.stderr).toContain("Try: booking-sync reconcile --apply-missing");
    const kept = mirror(h.dbPath);
    expect(kept.ids).toHaveLength(310);
    expect(kept.missing).toBe(0);
    expect(await statusJson(mine)).toMatchObject({
      source: { baseUrl: other.url },
      reconcileWithheld: { count: 300, judged: 300, maxPercent: 10 },
    });
    const text = await runCli(["status"], mine);
    expect(text.stdout).toMatch(/^reconcile +300 of 300 bookings \(100%\) would be marked missing/m);
    expect(text.stdout).toMatch(new RegExp(`^source +${other.url} since `, "m"));

    const applied = await runCli(["reconcile", "--apply-missing"], theirs);
    expect(applied.code, applied.stderr).toBe(0);
    expect(applied.stdout).toContain("300 newly missing");
    expect(mirror(h.dbPath).missing).toBe(300);
    expect(await statusJson(mine)).toMatchObject({ reconcileWithheld: null });
  });

  it("refuses another data set served at the same URL, and takes its own source back", async () => {
    const dir = mkdtempSync(join(tmpdir(), "booking-sync-source-"));
    dirs.push(dir);
    // Ids depend on creation times: a fixed epoch serves the same data set after a restart.
    const same = { seed: 1, bookings: 300, epochMs: Math.floor(Date.now() / 1000) * 1000 - 400 * 60_000 };
    const first = await startSimulator(same);
    const env = {
      ...process.env,
      BOOKING_API_BASE_URL: first.url,
      BOOKING_API_TOKEN: "sim-token",
      BOOKING_DB_PATH: join(dir, "bookings.db"),
      LOG_LEVEL: "warn",
    };
    expect((await runCli(["sync"], env)).code).toBe(0);
    const before = mirror(env.BOOKING_DB_PATH);
    await first.close();
    // Another account, the same address: the bookings it serves tell them apart.
    const stranger = await simulator({ seed: 2, bookings: 10, port: first.port });
    const refused = await runCli(["reconcile"], env);
    expectRefused(refused, first.url);
    expect(refused.stderr).toContain("serves none of the bookings this mirror remembers");
    expect(mirror(env.BOOKING_DB_PATH)).toEqual(before);
    await stranger.close();
    sims.splice(sims.indexOf(stranger), 1);
    // The same data set again (the simulator is seeded): the same source.
    await simulator({ ...same, port: first.port });
    const back = await runCli(["sync"], env);
    expect(back.code, back.stderr).toBe(0);
  });

  it("holds a mirror made before sources were remembered to its bookings; shows an edited record as unreadable", async () => {
    h = await harness({ bookings: 2000 });
    const mine = h.env({ LOG_LEVEL: "warn" });
    expect((await runCli(["sync"], mine)).code).toBe(0);
    editSourceRow(h.dbPath, null);
    const before = mirror(h.dbPath);
    const other = await simulator({ seed: 2, bookings: 10 });
    const theirs = { ...mine, BOOKING_API_BASE_URL: other.url };
    const refused = await runCli(["reconcile"], theirs);
    expectRefused(refused, "this mirror has no record of its source yet", "holds 2000 bookings", other.url);
    expect(mirror(h.dbPath)).toEqual(before);
    expect(await statusJson(mine)).toMatchObject({ source: null });

    const back = await runCli(["sync"], mine);
    expect(back.code, back.stderr).toBe(0);
    expect(await statusJson(mine)).toMatchObject({ source: { baseUrl: h.sim.url } });

    for (const edited of ['{"baseUrl": 5, "bookings": "by hand"}', "not json {"]) {
      editSourceRow(h.dbPath, edited);
      expect(await statusJson(mine)).toMatchObject({ source: { unreadable: true } });
      const text = await runCli(["status"], mine);
      expect(text.code, text.stderr).toBe(0);
      expect(text.stdout).toMatch(/^source +unreadable source record: /m);
    }
    // Over a record it cannot read, a command checks its source and remembers it anew, as adopt-source does.
    const anew = await runCli(["sync"], mine);
    expect(anew.code, anew.stderr).toBe(0);
    expect(await statusJson(mine)).toMatchObject({ source: { baseUrl: h.sim.url } });
    editSourceRow(h.dbPath, "not json {");
    const adopt = await runCli(["adopt-source"], mine);
    expect(adopt.code, adopt.stderr).toBe(0);
    expect(await statusJson(mine)).toMatchObject({ source: { baseUrl: h.sim.url, bookings: [] } });
  });

  it("shows withheld marks on /readyz and the status page, and a scheduled reconcile that withholds does not fail", async () => {
    h = await harness({ bookings: 200 });
    expect((await runCli(["backfill"], h.env({ LOG_LEVEL: "warn" }))).code).toBe(0);
    for (let i = 0; i < 50; i++) h.sim.remove(i * 4);
    const port = await freePort();
    const d = spawnDaemon(
      h.env({
        HTTP_PORT: String(port),
        SYNC_SCHEDULE: NEVER,
        RECONCILE_SCHEDULE: "* * * * * *",
        RECONCILE_MAX_MISSING_SHARE: "20%",
      }),
    );
    try {
      const done = await d.waitForLogs(
        (l) => String(l.msg).startsWith("reconcile finished") && l.status === "success",
        2,
        "two scheduled reconciles",
      );
      expect(done.map((l) => l.withheld)).toEqual([50, 50]);
      const ready = await http(`http://127.0.0.1:${port}/readyz`);
      const body = ready.json as { reconcileWithheld: unknown; reason: string };
      expect(body.reconcileWithheld).toMatchObject({ count: 50, judged: 200, maxPercent: 20 });
      expect(body.reason).toContain("booking-sync reconcile --apply-missing");
      const page = await http(`http://127.0.0.1:${port}/`);
      expect(page.text).toMatch(/data-figure="reconcile-withheld" class="bad">50</);
      expect(page.text).toContain(`data-figure="source">127.0.0.1:${h.sim.port}<`);
      expect(mirror(h.dbPath).missing).toBe(0);
    } finally {
      d.child.kill("SIGTERM");
      await d.exited;
    }
  });
});
