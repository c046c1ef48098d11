/**
 * Quirks a source repeats on every answer must not fail every run when the mirror is complete
 * (DESIGN-NOTES invariant 11), and must still fail a run where bookings may be missing. The CLI
 * against `support/hostile-server.ts` with a quirk on from the start, on SQLite and PostgreSQL: its
 * `main` in-process, and the built CLI (a subprocess) on SQLite where the test reads its stderr.
 */
import { afterEach, expect, it } from "vitest";
import { runCliInProcess } from "./support/cli-in-process.js";
import {
  type CliResult,
  databaseEnv,
  describeIds,
  hostileEnv,
  readMirror,
  runCli,
  tail,
} from "./support/hostile-run.js";
import { type HostileOptions, secondsApart, startHostileServer } from "./support/hostile-server.js";
import { mirrorSql } from "./support/mirror-harness.js";
import { type Backend, describeBackends } from "./support/postgres.js";

const SEED = Number(process.env.HOSTILE_SEED ?? 7);

let cleanup: (() => Promise<void>) | undefined;
afterEach(async () => {
  await cleanup?.();
  cleanup = undefined;
});

/**
 * One test's world on `backend`: the source with `options`, a fresh mirror, and the CLI pointed at
 * both; `built` runs the built CLI as a subprocess on SQLite, for a test that reads its stderr.
 */
async function world(
  backend: Backend,
  options: Partial<HostileOptions>,
  env: Record<string, string> = {},
  built = false,
) {
  const location = await backend.url();
  const server = await startHostileServer({ seed: SEED, count: 1500, ...options });
  cleanup = () => server.close();
  const run = built && backend.kind === "sqlite" ? runCli : runCliInProcess;
  const db = databaseEnv(backend.kind, location);
  const cli = (command = "sync", more: Record<string, string> = {}) =>
    run([command], hostileEnv(server, location, { ...db, ...env, ...more }));
  /** One value of the mirror's SQL (`$1` placeholders), through a connection of the test's own. */
  const value = async (sql: string, params: unknown[] = []): Promise<unknown> => {
    const reader = mirrorSql(backend.kind, location);
    try {
      return Object.values((await reader.query(sql, params))[0] ?? {})[0];
    } finally {
      await reader.close();
    }
  };
  return { server, cli, read: () => readMirror(location, backend.kind), value };
}

type World = Awaited<ReturnType<typeof world>>;

/** The last run's status and error text (a warning on a successful run) from sync_runs. */
async function lastRun(w: World): Promise<{ status: unknown; error: unknown }> {
  const by = "FROM sync_runs ORDER BY id DESC LIMIT 1";
  return { status: await w.value(`SELECT status ${by}`), error: await w.value(`SELECT error ${by}`) };
}

/** Every keyed booking the source serves (of `type`, when given) is in `bookings`. */
async function expectComplete(w: World, r: CliResult, type?: "IN" | "LC"): Promise<void> {
  const served = w.server.data
    .newestFirst()
    .filter((b) => !type || b.full.type === type)
    .map((b) => b.id);
  const { live } = await w.read();
  const absent = served.filter((id) => !live.has(id));
  expect(absent, `absent: ${describeIds(absent, w.server)}\n${tail(r)}`).toEqual([]);
}

/**
 * A typed stream's world, synced once, whose source dates the bookings in `misdated` 1970-01-01.
 * Details off: the list's pass would store what a walk skipped. Times end near now, so later runs
 * walk from a checkpoint.
 */
async function misdatingTyped(backend: Backend, count: number, pageSize: number) {
  const misdated = new Set<number>();
  const trueUsOf = secondsApart(Date.now() - 1_900_000);
  const env = { SYNC_PAGE_SIZE: String(pageSize), SYNC_BOOKING_TYPE: "IN", SYNC_DETAILS: "false" };
  const w = await world(backend, { count, trueUsOf, quirks: { misdated } }, env);
  const first = await w.cli();
  expect(first.code, tail(first)).toBe(0);
  /** Adds `added` bookings, then dates the typed ones at places `from` to `to` (newest first, `to` left out) 1970. */
  const misdate = (added: number, from: number, to: number) => {
    w.server.data.add(added);
    const typed = w.server.data.newestFirst().filter((b) => b.full.type === "IN");
    for (const b of typed.slice(from, to)) misdated.add(b.index);
  };
  return { w, misdated, misdate };
}

describeBackends("a quirk the source repeats on every run", (backend) => {
  it("hasMore: true and nextCursor: null on every page, the last page empty: exit 0 with a warning, every run", async () => {
    const w = await world(backend, { quirks: { claimsMore: true } });
    const { server, cli } = w;
    for (const when of ["cold", "again"]) {
      // A lookback over the whole source, so the second run walks to the feed's end again too.
      const r = await cli("sync", { SYNC_LOOKBACK_SECONDS: "86400" });
      expect(r.code, `${when}\n${tail(r)}`).toBe(0);
      await expectComplete(w, r);
      expect(await lastRun(w), when).toMatchObject({
        status: "success",
        error: expect.stringMatching(/hasMore/),
      });
      server.data.add(120);
    }
  }, 120_000);

  it("the same on a typed stream, judged by the oldest booking's time", async () => {
    const w = await world(backend, { quirks: { claimsMore: true } }, { SYNC_BOOKING_TYPE: "IN" });
    const { server, cli } = w;
    for (const when of ["cold", "again"]) {
      const r = await cli();
      expect(r.code, `${when}\n${tail(r)}`).toBe(0);
      await expectComplete(w, r, "IN");
      server.data.add(120);
    }
  }, 120_000);

  it("pages capped below a tie run, hasMore: false on every page: every booking of every type, every run", async () => {
    // Twelve bookings a millisecond and five a page at most: every page ends inside a tie run, the
    // same as the feed's end would look, so only the list can tell them apart.
    const startMs = Math.floor(Date.now() / 60_000) * 60_000 - 7_200_000;
    const trueUsOf = (i: number) => (startMs + Math.floor(i / 12)) * 1000;
    const quirks = { capsPage: 5 };
    const env = { SYNC_PAGE_SIZE: "20", SYNC_LOOKBACK_SECONDS: "86400" };
    for (const type of [undefined, "IN", "LC"] as const) {
      const w = await world(
        backend,
        { count: 240, trueUsOf, quirks },
        type ? { SYNC_BOOKING_TYPE: type } : {},
      );
      for (const when of ["cold", "again"]) {
        const r = await w.cli("sync", env);
        expect(r.code, `${type ?? "all"} ${when}\n${tail(r)}`).toBe(0);
        await expectComplete(w, r, type);
        w.server.data.add(36);
      }
      await cleanup?.();
      cleanup = undefined;
    }
    // Enough for a fill in slices: each slice's first page, asked at a probed time, is cut too.
    const w = await world(backend, { count: 1200, trueUsOf, quirks });
    const r = await w.cli("sync", { ...env, SYNC_CONCURRENCY: "4" });
    expect(r.code, `a fill in slices\n${tail(r)}`).toBe(0);
    await expectComplete(w, r);
  }, 240_000);

  it("neighbours misdated into the past in mid-feed, on a typed stream: every booking, the fill and every run", async () => {
    // A typed stream has no total to show a gap, so a walk that took such a pair for its floor would
    // exit 0 with the bookings below them missing for good. Details off: a fill's list pass would
    // store what its walk skipped. Times end near now, so the later runs walk from a checkpoint.
    const trueUsOf = secondsApart(Date.now() - 1_900_000);
    const misdated = new Set<number>();
    const env = { SYNC_PAGE_SIZE: "20", SYNC_BOOKING_TYPE: "IN", SYNC_DETAILS: "false" };
    const w = await world(backend, { count: 1200, trueUsOf, quirks: { misdated } }, env);
    const typed = () => w.server.data.newestFirst().filter((b) => b.full.type === "IN");
    const misdate = (...positions: number[]) => {
      for (const at of positions) for (const b of typed().slice(at, at + 2)) misdated.add(b.index);
    };
    misdate(95, 150, 233, 321); // pairs inside a fill's slices
    for (const [when, ...positions] of [["the fill", 9, 47, 88], ["a sync", 30, 62], ["another"]] as const) {
      const r = await w.cli("sync", { SYNC_CONCURRENCY: "4" });
      expect(r.code, `${when}\n${tail(r)}`).toBe(0);
      await expectComplete(w, r, "IN");
      w.server.data.add(300);
      misdate(...positions); // among the new bookings
    }
  }, 120_000);

  it("five new bookings misdated into the past end a run's first page, on a typed stream: the walk reads on to every booking after them", async () => {
    // Five records below the floor, in order, at a page's end look like the checkpoint reached. The
    // mirror did not store them before the walk began, so they are no floor. Without that check the
    // run exited 0 with the typed bookings after them missing for good.
    const { w, misdate } = await misdatingTyped(backend, 300, 20);
    misdate(200, 15, 20); // the last five of the first page
    const r = await w.cli();
    expect(r.code, tail(r)).toBe(0);
    await expectComplete(w, r, "IN");
    expect(await lastRun(w)).toMatchObject({
      status: "success",
      error: expect.stringMatching(
        /the mirror did not store before this walk began end a page below its floor/,
      ),
    });
  }, 120_000);

  it("the same five after one new booking, on pages of six: every run fails, none exits 0 with them read as the floor", async () => {
    // From the five's time the feed serves none of them, and from the booking above them the same page
    // again, the five stored by then: the walk must not take them for the floor.
    const { w, misdated, misdate } = await misdatingTyped(backend, 100, 6);
    const checkpoint = () => w.value("SELECT checkpoint FROM sync_state WHERE stream = 'feed:IN'");
    const before = await checkpoint();
    misdate(60, 1, 6);
    for (const when of ["first", "again"]) {
      const r = await w.cli();
      expect(r.code, `${when}\n${tail(r)}`).toBe(1);
      expect(r.stderr, when).toMatch(/the feed did not serve again the bookings at/);
      expect(await checkpoint(), when).toBe(before);
    }
    misdated.clear(); // the source heals: the next run reads every booking
    const r = await w.cli();
    expect(r.code, tail(r)).toBe(0);
    await expectComplete(w, r, "IN");
  }, 120_000);

  it("bookings the list misdates into the past, one ending a page: the details pass reads past them to every new booking", async () => {
    const misdated = new Set<number>();
    const w = await world(backend, { count: 300, quirks: { misdated, misdatedInListOnly: true } });
    expect((await w.cli()).code).toBe(0);
    // 250 new bookings, two and a half list pages; the list dates the 11th and the 100th newest (the
    // last of its first page) 1970-01-01.
    w.server.data.add(250);
    for (const at of [10, 99]) misdated.add((w.server.data.newestFirst()[at] as { index: number }).index);
    const r = await w.cli();
    expect(r.code, tail(r)).toBe(0);
    expect(await w.value("SELECT count(*) FROM bookings WHERE detail_synced_at IS NULL"), tail(r)).toBe(0);
    expect(r.stdout).toMatch(/details: 250 of 250 found, 250 stored in 3 pages ·/);
  }, 120_000);

  it("records without _id, counted in the source's total: quarantined, and exit 0 every run", async () => {
    const w = await world(backend, { quirks: { withoutIdEvery: 97 } });
    const { server, cli } = w;
    for (const when of ["cold", "again", "third"]) {
      const r = await cli();
      expect(r.code, `${when}\n${tail(r)}`).toBe(0);
      const keyed = server.data.newestFirst().filter((b) => b.index % 97 !== 0);
      const { live } = await w.read();
      const absent = keyed.map((b) => b.id).filter((id) => !live.has(id));
      expect(absent, `${when}: ${describeIds(absent, server)}\n${tail(r)}`).toEqual([]);
      expect((await lastRun(w)).error, when).toMatch(/without a usable _id/);
      server.data.add(100);
    }
  }, 120_000);

  it("records without _id inside tie runs the feed cannot page through: exit 0 every run", async () => {
    // Seven bookings a millisecond and pages of five: every millisecond is a tie run read on the list.
    const startMs = Math.floor(Date.now() / 60_000) * 60_000 - 7_200_000;
    const trueUsOf = (i: number) => (startMs + Math.floor(i / 7)) * 1000 + (i % 7) * 137;
    const quirks = { withoutIdEvery: 11 };
    const w = await world(backend, { count: 200, precision: "us", trueUsOf, quirks });
    const { server, cli } = w;
    for (const when of ["cold", "again"]) {
      const r = await cli("sync", { SYNC_PAGE_SIZE: "5" });
      expect(r.code, `${when}\n${tail(r)}`).toBe(0);
      const keyed = server.data.newestFirst().filter((b) => b.index % 11 !== 0);
      const { live } = await w.read();
      const absent = keyed.map((b) => b.id).filter((id) => !live.has(id));
      expect(absent, `${when}: ${describeIds(absent, server)}\n${tail(r)}`).toEqual([]);
      server.data.add(30);
    }
  }, 120_000);

  it("both quirks at once, then a reconcile and a sync: exit 0 every time", async () => {
    const w = await world(backend, { quirks: { claimsMore: true, withoutIdEvery: 97 } });
    const { server, cli } = w;
    for (const command of ["sync", "sync", "reconcile", "sync"]) {
      const r = await cli(command);
      expect(r.code, `${command}\n${tail(r)}`).toBe(0);
    }
    const keyed = server.data.newestFirst().filter((b) => b.index % 97 !== 0);
    const { live } = await w.read();
    expect(keyed.filter((b) => !live.has(b.id))).toEqual([]);
  }, 120_000);

  it("one record over the response-body cap on every request: it costs only itself, every run", async () => {
    const quirks = { hugeIndex: 700, hugeBytes: 3 * 1024 * 1024 };
    const w = await world(backend, { quirks }, { SYNC_MAX_RESPONSE_MB: "1" }, true);
    const { server, cli } = w;
    const huge = server.data.newestFirst().find((b) => b.index === 700)?.id;
    for (const command of ["sync", "sync", "reconcile", "backfill"]) {
      const r = await cli(command);
      expect(r.code, `${command}\n${tail(r)}`).toBe(0);
      await expectComplete(w, r);
      expect(r.stderr, command).not.toMatch(/response body over/);
    }
    expect((await w.read()).live.has(huge as string)).toBe(true);
  }, 120_000);

  it("still fails where bookings may be missing: empty pages that claim more from mid-walk on", async () => {
    const w = await world(backend, { quirks: { claimsMore: true } }, {}, true);
    const { server, cli } = w;
    server.setFault("emptyPage", { page: 4, persistent: true });
    const r = await cli();
    expect(r.code, tail(r)).toBe(1);
    expect(r.stderr).toMatch(/empty page|hasMore|did not serve again/i);
    expect((await w.read()).checkpoint).toBeNull();
    server.heal();
    const healed = await cli();
    expect(healed.code, tail(healed)).toBe(0);
    await expectComplete(w, healed);
  }, 120_000);

  it("a typed stream still fails where bookings may be missing", async () => {
    const w = await world(backend, { quirks: { claimsMore: true } }, { SYNC_BOOKING_TYPE: "IN" });
    const { server, cli } = w;
    server.setFault("emptyPage", { page: 3, persistent: true });
    const r = await cli();
    expect(r.code, tail(r)).toBe(1);
    const checkpoint = await w.value("SELECT checkpoint FROM sync_state WHERE stream = $1", ["feed:IN"]);
    expect(checkpoint ?? null).toBeNull();
  }, 120_000);
});
