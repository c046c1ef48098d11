/**
 * A fill under way, as `status` (text and --json, the CLI as a subprocess), the status page and
 * /readyz show it: the fill's state written through the store's progress mechanism, as the fill saves
 * it with each page, and read back by the status reads on each backend. A legacy or garbage progress
 * still gives a working status.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createHealth, fillReadiness } from "../src/daemon/health.js";
import { type HttpServerHandle, startHttpServer } from "../src/daemon/http.js";
import { createMetrics } from "../src/daemon/metrics.js";
import { etaWords, type FillStatus, fillStatus, fillText } from "../src/store/fill-status.js";
import type { Status } from "../src/store/status.js";
import type { Mirror } from "../src/store/store.js";
import type { FillProgress } from "../src/sync/fill/progress.js";
import { memoryLogger } from "./support/fakes.js";
import { runCli } from "./support/harness.js";
import { type MirrorSql, mirrorSql, openBackendMirror } from "./support/mirror-harness.js";
import { type BackendKind, describeBackends } from "./support/postgres.js";
import { figure, serveStatusPage } from "./support/status-page.js";

const MIN_MS = 60_000;
const iso = (d: Date, plusMs = 0) => new Date(d.getTime() + plusMs).toISOString();

/** A single walk's progress, as a fill's slice or as an earlier version saved it alone. */
function walk(at: Date, upTo: string | null): FillProgress["slices"][number] {
  const progress = { startedAt: iso(at), floor: null, ceiling: null, upTo, anchor: null, fallback: null };
  return { ...progress, top: null, pages: 0 } as FillProgress["slices"][number];
}

/** 420 of 1,000 pages, 3 of 8 slices left, due 12 minutes after `at`. */
function fillAt(at: Date): FillProgress {
  return {
    kind: "fill",
    startedAt: iso(at, -10 * MIN_MS),
    floor: null,
    top: iso(at, -MIN_MS),
    sliceCount: 8,
    slices: [walk(at, iso(at, -100 * MIN_MS)), walk(at, iso(at, -200 * MIN_MS)), walk(at, null)],
    details: { pageSize: 100, pages: 500, read: [[1, 120]] },
    pages: 420,
    plannedPages: 1000,
    etaAt: iso(at, 12 * MIN_MS),
    savedAt: iso(at, -5000),
  };
}

function shownAt(at: Date): FillStatus {
  const f = fillAt(at);
  return {
    percent: 42,
    pages: 420,
    plannedPages: 1000,
    slicesLeft: 3,
    sliceCount: 8,
    startedAt: f.startedAt,
    savedAt: f.savedAt,
    etaAt: f.etaAt,
    etaSeconds: 720,
  };
}

describe("a fill's figures, read defensively", () => {
  const at = new Date("2026-03-01T10:00:00.000Z");
  const fill = fillAt(at);
  const cases: Array<[string, unknown, Partial<FillStatus> | null]> = [
    ["a fill, as JSON text", JSON.stringify(fill), shownAt(at)],
    ["a fill, parsed", fill, shownAt(at)],
    ["every page planned read: 99% until the fill ends", { ...fill, pages: 1000 }, { percent: 99 }],
    ["more pages than planned", { ...fill, pages: 1500 }, { percent: 99, pages: 1500 }],
    ["nothing planned yet", { ...fill, pages: 0, plannedPages: 0 }, { percent: 0 }],
    [
      "an ETA with an offset, written in UTC",
      { ...fill, etaAt: "2026-03-01T11:12:00+01:00" },
      { etaAt: "2026-03-01T10:12:00.000Z" },
    ],
    ["no ETA yet", { ...fill, etaAt: null }, { etaAt: null, etaSeconds: null }],
    ["an ETA that is no time", { ...fill, etaAt: "soon<script>" }, { etaAt: null, etaSeconds: null }],
    ["a start that is no time", { ...fill, startedAt: 12 }, { startedAt: null }],
    ["a single walk of an earlier version", walk(at, null), null],
    ["garbage", '{"kind":"fill","pages":', null],
    ["a count that is text", { ...fill, pages: "420" }, null],
    ["a negative count", { ...fill, plannedPages: -1 }, null],
    ["slices that are not a list", { ...fill, slices: 3 }, null],
    ["null", null, null],
    ["a number", 7, null],
  ];
  it.each(cases)("%s", (_name, progress, expected) => {
    const shown = fillStatus(progress, at);
    if (expected === null) expect(shown).toBeNull();
    else expect(shown).toMatchObject(expected);
  });

  it("says how far it has got and when it should end, in one line", () => {
    const shown = shownAt(at);
    expect(fillText(shown)).toBe(
      "42% · 420 of 1000 pages · 3 of 8 slices left · ends about 2026-03-01T10:12:00.000Z (in 12 min)",
    );
    expect(fillText({ ...shown, etaAt: null, etaSeconds: null })).toBe(
      "42% · 420 of 1000 pages · 3 of 8 slices left · end not known yet",
    );
    expect([etaWords(30), etaWords(720), etaWords(0), etaWords(-59), etaWords(-300)]).toEqual([
      "in 1 min",
      "in 12 min",
      "due now",
      "due now",
      "5 min overdue",
    ]);
  });

  it("/readyz keeps the fill last read when a read fails, and says so in the log", async () => {
    const health = createHealth({ readyMaxAgeSeconds: 180 });
    health.recordSuccess(at);
    const logger = memoryLogger();
    let fail = false;
    const ready = fillReadiness(
      (now) => health.status(now),
      async (now) => {
        if (fail) throw new Error("database is locked");
        return fillStatus(fill, now);
      },
      logger,
    );
    expect((await ready(at)).ready).toBe(false);
    fail = true;
    const during = await ready(at);
    expect(during.ready).toBe(false);
    expect(during.fill).toEqual(shownAt(at));
    expect(logger.lines.map((l) => l.level)).toEqual(["warn"]);
  });
});

/** The mirror's settings for a subprocess: the database alone, nothing of the API. */
function dbEnv(kind: BackendKind, location: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: "info" };
  for (const name of Object.keys(env)) if (/^BOOKING_(API|DB)_/.test(name)) delete env[name];
  if (kind === "sqlite") env.BOOKING_DB_PATH = location;
  else env.BOOKING_DB_URL = location;
  return env;
}

let mirror: Mirror | undefined;
let sql: MirrorSql | undefined;
const servers: HttpServerHandle[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
  await sql?.close();
  await mirror?.close();
  mirror = sql = undefined;
});

describeBackends("a fill under way", (backend) => {
  /**
   * A mirror whose `feed` stream holds a fill saved as of `at`, `feed:LC` an earlier version's walk
   * and `feed:IN` progress that is no JSON at all.
   */
  async function filling(at: Date) {
    const location = await backend.url();
    const m = await openBackendMirror(backend.kind, location);
    mirror = m;
    const save = (stream: string, value: unknown) =>
      m.save({ source: "feed", records: [], rejects: [], syncedAt: iso(at), progress: { stream, value } });
    await save("feed", fillAt(at));
    await save("feed:LC", walk(at, iso(at, -MIN_MS)));
    await save("feed:IN", walk(at, null));
    await m.flush();
    sql = mirrorSql(backend.kind, location);
    await sql.execute(
      `UPDATE sync_state SET progress_json = '{"kind":"fill","pages":' WHERE stream = 'feed:IN'`,
    );
    return { m, save, location };
  }

  it("status --json gives each stream's fill, and the text says how far and when", async () => {
    const at = new Date();
    const { location } = await filling(at);
    const run = (...args: string[]) => runCli(["status", ...args], dbEnv(backend.kind, location));

    const json = await run("--json");
    expect(json.stderr).toBe("");
    expect(json.code).toBe(0);
    const s = JSON.parse(json.stdout) as Status;
    const feed = s.streams.find((st) => st.stream === "feed");
    // Read a moment after `at`: the ETA is a few seconds nearer.
    expect(feed?.fill).toEqual({ ...shownAt(at), etaSeconds: expect.any(Number) });
    expect(feed?.fill?.etaSeconds).toBeGreaterThan(660);
    expect(feed?.fill?.etaSeconds).toBeLessThanOrEqual(720);
    expect(s.streams.map((st) => [st.stream, st.inProgress, st.fill])).toEqual([
      ["feed", true, feed?.fill],
      ["feed:IN", true, null],
      ["feed:LC", true, null],
    ]);
    // The rest of the shape is as it was: one key more per stream, at its end.
    expect(Object.keys(feed ?? {})).toEqual([
      "stream",
      "checkpoint",
      "checkpointAgeSeconds",
      "note",
      "inProgress",
      "updatedAt",
      "fill",
    ]);

    const text = await run();
    expect(text.code).toBe(0);
    const eta = fillAt(at).etaAt;
    expect(text.stdout).toMatch(
      new RegExp(
        `^filling +feed: 42% · 420 of 1000 pages · 3 of 8 slices left · ends about ${eta} \\(in 12 min\\)$`,
        "m",
      ),
    );
    expect(text.stdout).toMatch(/^ {2}feed +none yet +filling 42%$/m);
    expect(text.stdout).toMatch(/^ {2}feed:IN +none yet +in progress$/m);
  });

  it("the status page shows the fill as a bar and a line; /readyz is 503 until it ends", async () => {
    const at = new Date("2026-03-01T10:00:00.000Z");
    const { m, save } = await filling(at);
    const { server } = await serveStatusPage(() => m.readStatusPage(at));
    const page = await (await fetch(`${server.url}/`)).text();
    expect(figure(page, "fill-percent")).toBe("42%");
    expect(page).toContain('<progress max="100" value="42">42%</progress>');
    expect(figure(page, "fill-text")).toBe(
      "42% · 420 of 1000 pages · 3 of 8 slices left · ends about 2026-03-01 10:12:00 UTC (in 12 min)",
    );
    expect(page.match(/data-fill="/g)).toHaveLength(1);
    expect(page).toMatch(/<tr data-stream="feed">[\s\S]*?<td>filling 42%<\/td>/);
    expect(page).toMatch(/<tr data-stream="feed:IN">[\s\S]*?<td>walk in progress<\/td>/);

    const health = createHealth({ readyMaxAgeSeconds: 180 });
    health.recordSuccess(new Date(at.getTime() - 10_000));
    const readyz = await startHttpServer({
      host: "127.0.0.1",
      port: 0,
      health: {
        status: fillReadiness(
          (now) => health.status(now),
          (now) => m.readFill("feed", now),
          memoryLogger(),
        ),
      },
      registry: createMetrics({ processMetrics: false }).registry,
      trigger: () => ({ accepted: true, coalesced: false }),
      clock: { now: () => at },
      logger: memoryLogger(),
    });
    servers.push(readyz);
    const during = await fetch(`${readyz.url}/readyz`);
    expect(during.status).toBe(503);
    const body = (await during.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ status: "not ready", ready: false, fill: shownAt(at), ageSeconds: 10 });
    expect(body.reason).toBe(
      "filling: 42% · 420 of 1000 pages · 3 of 8 slices left · ends about 2026-03-01T10:12:00.000Z (in 12 min); " +
        "last success at 2026-03-01T09:59:50.000Z (10 s ago, within 180 s)",
    );

    // The fill ended: its progress is cleared with its last page, and readiness is the last success's again.
    await save("feed", null);
    await m.flush();
    const after = await fetch(`${readyz.url}/readyz`);
    expect(after.status).toBe(200);
    expect(await after.json()).toMatchObject({ status: "ready", fill: null });
    expect((await m.readStatus(at)).streams.map((st) => st.fill)).toEqual([null, null, null]);
  });
});
