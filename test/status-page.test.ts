/**
 * The daemon's status page (GET /) over real HTTP on 127.0.0.1:0, reading a real SQLite mirror filled
 * by real syncs from the simulator: its figures against our own queries, its charts against the
 * bookings' Lagos days, and none of the people's values or tokens the mirror holds.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { HttpServerHandle, HttpServerOptions } from "../src/daemon/http.js";
import { escapeHtml } from "../src/daemon/status-html.js";
import { renderStatusPage } from "../src/daemon/status-page.js";
import { DAILY_DAYS, lagosDays } from "../src/store/daily.js";
import type { Status } from "../src/store/status.js";
import { rawControls } from "./support/controls.js";
import { analyst, type Harness, harness } from "./support/harness.js";
import { chart, figure, personalValues, serveStatusPage } from "./support/status-page.js";

// 300 bookings 97 minutes apart from 21:00 UTC on 1 May 2025: about 20 days, through every hour, so
// bookings between 23:00 and 24:00 UTC fall on the next Lagos day.
const DATA = { bookings: 300, seed: 11, epochMs: Date.UTC(2025, 4, 1, 21, 0), spacingMs: 97 * 60_000 };
/** Four days after the last booking: the 30 days hold empty days at both ends. */
const AT = new Date("2025-05-25T12:00:00.000Z");
const TRIGGER_TOKEN = "trigger-token-for-the-status-page-test";
const HOSTILE_ERROR = `fetch-recent-bookings: HTTP 500: <script>alert("x")</script> & 'quoted' <img src=x onerror=alert(1)>`;
const HOUR_MS = 3_600_000;

let h: Harness | undefined;
const servers: HttpServerHandle[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
  await h?.close();
  h = undefined;
});

/** The HTTP endpoint as the daemon builds it, its page reading `h`'s store. */
async function serve(overrides: Partial<HttpServerOptions> = {}) {
  const served = await serveStatusPage(() => (h as Harness).store.readStatusPage(AT), {
    triggerToken: TRIGGER_TOKEN,
    ...overrides,
  });
  servers.push(served.server);
  return served;
}

/** A mirror with details, 2 rejects, 5 bookings gone from the source and a failed run with a hostile error. */
async function seededMirror(): Promise<Harness> {
  h = await harness(DATA);
  h.sim.inject([{ kind: "malformed", count: 2 }], { path: "feed" });
  expect((await h.sync({ details: true })).status).toBe("success");
  h.sim.inject({ kind: "401" }, { path: "feed" });
  expect((await h.sync()).status).toBe("failed");
  h.store.db
    .prepare(
      "UPDATE sync_runs SET error = ? WHERE id = (SELECT max(id) FROM sync_runs WHERE status = 'failed')",
    )
    .run(HOSTILE_ERROR);
  h.store.db.exec(
    "UPDATE bookings SET missing_since = '2025-05-24T00:00:00.000Z' WHERE id IN (SELECT id FROM bookings ORDER BY id LIMIT 5)",
  );
  return h;
}

const count = (n: number) => n.toLocaleString("en-US");
const lagosDay = (createdAt: string) => new Date(Date.parse(createdAt) + HOUR_MS).toISOString().slice(0, 10);

describe("the Lagos days of the charts", () => {
  it("are the day holding `at` in UTC+1 and the 29 before it, oldest first", () => {
    const before = lagosDays(DAILY_DAYS, new Date("2025-05-25T22:59:59.999Z"));
    const after = lagosDays(DAILY_DAYS, new Date("2025-05-25T23:00:00.000Z"));
    expect(before).toHaveLength(30);
    expect([before[0], before.at(-1)]).toEqual(["2025-04-26", "2025-05-25"]);
    expect([after[0], after.at(-1)]).toEqual(["2025-04-27", "2025-05-26"]);
    expect(new Set(before).size).toBe(30);
  });

  it("sum each day's bookings and total_amount over platforms and types, zeros on empty days", async () => {
    h = await seededMirror();
    const { daily } = await h.store.readStatusPage(AT);
    const db = analyst(h.dbPath);
    const rows = db
      .prepare("SELECT created_at, total_amount FROM bookings WHERE missing_since IS NULL")
      .all() as Array<{ created_at: string; total_amount: number | null }>;
    db.close();
    const want = new Map<string, { bookings: number; totalAmount: number }>();
    for (const r of rows) {
      const w = want.get(lagosDay(r.created_at)) ?? { bookings: 0, totalAmount: 0 };
      w.bookings++;
      w.totalAmount += r.total_amount ?? 0;
      want.set(lagosDay(r.created_at), w);
    }
    expect(daily.map((d) => d.day)).toEqual(lagosDays(DAILY_DAYS, AT));
    for (const d of daily) {
      const w = want.get(d.day) ?? { bookings: 0, totalAmount: 0 };
      expect(d.bookings, d.day).toBe(w.bookings);
      expect(Math.abs(d.totalAmount - w.totalAmount), d.day).toBeLessThan(0.01);
    }
    // Every booking falls in the window, and the window has empty days: the zeros are tested.
    expect(daily.reduce((s, d) => s + d.bookings, 0)).toBe(rows.length);
    expect(daily.filter((d) => d.bookings === 0).length).toBeGreaterThan(5);
  });
});

describe("GET / (the status page)", () => {
  it("shows the mirror's figures, runs, checkpoints and charts, with strict headers", async () => {
    h = await seededMirror();
    const { server } = await serve();
    const res = await fetch(`${server.url}/`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.headers.get("content-security-policy")).toMatch(
      /^default-src 'none'; style-src 'unsafe-inline';/,
    );
    const page = await res.text();

    const db = analyst(h.dbPath);
    const one = (sql: string) => db.prepare(sql).pluck().get() as number;
    try {
      expect(figure(page, "bookings-total")).toBe(count(one("SELECT count(*) FROM bookings")));
      expect(figure(page, "bookings-details")).toBe(
        count(one("SELECT count(*) FROM bookings WHERE detail_synced_at IS NOT NULL")),
      );
      expect(figure(page, "bookings-missing")).toBe("5");
      expect(figure(page, "rejects")).toBe(String(one("SELECT count(*) FROM rejected_records")));
      expect(Number(figure(page, "rejects"))).toBeGreaterThan(0);
      expect(figure(page, "drift-source")).toBe(
        count(one("SELECT source_total FROM sync_runs WHERE source_total IS NOT NULL ORDER BY id DESC")),
      );
      const checkpoint = db.prepare("SELECT checkpoint FROM sync_state WHERE stream = 'feed'").pluck().get();
      expect(page).toContain(
        String(checkpoint)
          .replace("T", " ")
          .replace(/\.\d+Z$/, " UTC"),
      );
      const failed = one("SELECT id FROM sync_runs WHERE status = 'failed'");
      expect(page).toMatch(
        new RegExp(`<tr data-run="${failed}"[^>]*>[\\s\\S]*?data-status="failed">failed<`),
      );
    } finally {
      db.close();
    }
    // The source's error text is shown, escaped: no element of it reaches the page.
    expect(page).toContain(escapeHtml(HOSTILE_ERROR));
    expect(page).not.toMatch(/<script|<img/i);

    const { daily } = await h.store.readStatusPage(AT);
    const bookings = chart(page, "bookings");
    const revenue = chart(page, "revenue");
    for (const svg of [bookings, revenue]) {
      expect(svg.match(/<rect /g)).toHaveLength(30);
      expect(svg).toMatch(/aria-label="[^"]+"/);
      expect(svg).toMatch(/<title>[^<]+ per Lagos day, 2025-04-26 to 2025-05-25<\/title>/);
      expect(svg).toContain(">2025-04-26</text>");
      expect(svg).toContain(">2025-05-25</text>");
      expect(svg).toContain('height="0"'); // the empty days, drawn as zero bars
    }
    const most = Math.max(...daily.map((d) => d.bookings));
    expect(bookings).toMatch(new RegExp(`class="max"[^>]*>${count(most)}</text>`));
    for (const d of daily)
      expect(bookings).toContain(`<title>${d.day}: ${count(d.bookings)} bookings</title>`);
    expect(figure(page, "chart-bookings-total")).toBe(count(daily.reduce((s, d) => s + d.bookings, 0)));
  });

  it("shows no person's name, phone, email or address line, and neither token", async () => {
    h = await seededMirror();
    const values = personalValues(h.dbPath, 12);
    expect(values.length).toBeGreaterThan(40);
    const { server } = await serve();
    const page = await (await fetch(`${server.url}/`)).text();
    expect(page).toContain('data-chart="bookings"'); // a real page, not an error
    for (const value of [...values, TRIGGER_TOKEN, "sim-token"]) {
      expect(page, value).not.toContain(value);
      expect(page, value).not.toContain(escapeHtml(value));
    }
  });

  it("answers HEAD without a body, other methods 405, and 503 when the database cannot be read", async () => {
    h = await seededMirror();
    const { server } = await serve();
    const head = await fetch(`${server.url}/`, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(await head.text()).toBe("");
    const post = await fetch(`${server.url}/`, { method: "POST" });
    expect(post.status).toBe(405);
    expect(post.headers.get("allow")).toBe("GET, HEAD");

    const busy = await serve({
      statusPage: () => {
        throw new Error("database is locked");
      },
    });
    const res = await fetch(`${busy.server.url}/`);
    expect(res.status).toBe(503);
    expect(res.headers.get("content-type")).toBe("text/plain; charset=utf-8");
    expect(await res.text()).toMatch(/^status unavailable: /);
    expect(busy.logger.lines).toContainEqual(
      expect.objectContaining({ level: "error", obj: { error: "database is locked" } }),
    );
  });

  it("without a status page reader, / stays 404 as before", async () => {
    h = await harness({ bookings: 1 });
    const { server } = await serve({ statusPage: undefined });
    expect((await fetch(`${server.url}/`)).status).toBe(404);
  });
});

describe("renderStatusPage", () => {
  it("says never synced on an empty mirror, with 30 zero bars a chart", async () => {
    h = await harness({ bookings: 1 });
    const page = renderStatusPage(await h.store.readStatusPage(AT));
    expect(figure(page, "last-success")).toBe("never synced");
    expect(figure(page, "drift-difference")).toBe("not checked yet");
    expect(page).toContain("No runs yet");
    for (const id of ["bookings", "revenue"]) {
      const svg = chart(page, id);
      expect(svg.match(/<rect [^>]*height="0"/g)).toHaveLength(30);
    }
  });

  it("escapes every string it is given, not only errors", () => {
    const evil = `"><script>alert(1)</script>\u001b]0;pwned\u0007\u001b[2J\r\u009b`;
    const status: Status = {
      at: AT.toISOString(),
      database: { path: evil, bytes: 0, walBytes: 0, backend: "sqlite" },
      bookings: { total: 0, withDetails: 0, missing: 0, withProblems: 0, detailsNotFound: 0 },
      lastSuccess: null,
      failing: { since: evil, runs: 2, error: evil, sameError: 1 },
      streams: [
        {
          stream: evil,
          checkpoint: null,
          checkpointAgeSeconds: null,
          note: evil,
          inProgress: true,
          updatedAt: evil,
          fill: null,
        },
      ],
      runs: [
        {
          id: 1,
          kind: evil,
          stream: evil,
          status: evil,
          startedAt: evil,
          finishedAt: null,
          durationSeconds: null,
          new: 0,
          updated: 0,
          unchanged: 0,
          rejects: 0,
          error: evil,
        },
      ],
      rejects: 0,
      drift: null,
      source: { baseUrl: evil, bookings: [{ id: evil, at: evil }], since: evil },
      reconcileWithheld: { count: 3, judged: 4, maxPercent: 10, runId: 1, at: evil, since: evil },
      events: {
        lastId: 9,
        oldest: { id: 1, at: evil },
        delivery: {
          cursor: 2,
          lagEvents: 7,
          lagSeconds: 60,
          attempts: 1,
          lastError: evil,
          lastErrorAt: evil,
          nextAttemptAt: evil,
          lastDeliveredAt: evil,
          dropped: 3,
          droppedAt: evil,
        },
      },
    };
    const daily = lagosDays(DAILY_DAYS, AT).map((day) => ({ day, bookings: 0, totalAmount: 0 }));
    const page = renderStatusPage({ status, daily });
    expect(page).not.toContain("<script");
    expect(page).toContain(
      "&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;\\u001b]0;pwned\\u0007\\u001b[2J\\r\\u009b",
    );
    // The source's controls show as escapes on the page too, never raw.
    expect(rawControls(page, "\n")).toEqual([]);
    // The webhook's error quotes the receiver: escaped like the rest, beside the events' figures.
    expect(figure(page, "events-last-error")).toBe(
      "&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;\\u001b]0;pwned\\u0007\\u001b[2J\\r\\u009b",
    );
    expect([figure(page, "events-lag-events"), figure(page, "events-cursor")]).toEqual(["7", "2"]);
    expect(figure(page, "events-dropped")).toBe("3");
  });
});
