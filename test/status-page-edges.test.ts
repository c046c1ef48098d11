/**
 * The status page where a real mirror is odd: sums too large for a double, syncs that keep failing,
 * and a details pass that has nothing left. Over real HTTP on 127.0.0.1:0, reading a SQLite mirror
 * filled by real syncs from the simulator, then changed with SQL where the source cannot go.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { HttpServerHandle } from "../src/daemon/http.js";
import { analyst, type Harness, harness } from "./support/harness.js";
import { chart, figure, serveStatusPage } from "./support/status-page.js";

// 300 bookings 97 minutes apart from 21:00 UTC on 1 May 2025, as status-page.test.ts has them.
const DATA = { bookings: 300, seed: 11, epochMs: Date.UTC(2025, 4, 1, 21, 0), spacingMs: 97 * 60_000 };
const AT = new Date("2025-05-25T12:00:00.000Z");
const HUGE = 1.7e308;

let h: Harness | undefined;
const servers: HttpServerHandle[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
  await h?.close();
  h = undefined;
});

async function page(): Promise<string> {
  const { server } = await serveStatusPage(() => (h as Harness).store.readStatusPage(AT));
  servers.push(server);
  const res = await fetch(`${server.url}/`);
  expect(res.status).toBe(200);
  return res.text();
}

/** "2025-05-01 12:00:00 UTC", as the page writes a time. */
const when = (iso: string) => iso.replace("T", " ").replace(/(\.\d+)?Z$/, " UTC");

/** Every number in the SVG's drawing attributes. */
function coordinates(svg: string): string[] {
  return [...svg.matchAll(/\s(?:x|y|x1|x2|y1|y2|width|height)="([^"]*)"/g)].map((m) => m[1] ?? "");
}

describe("sums too large for a double", () => {
  it("are shown as overflow, and the SVG holds no NaN or Infinity", async () => {
    h = await harness(DATA);
    expect((await h.sync()).status).toBe("success");
    // Two bookings on one Lagos day whose amounts sum past the largest double; one alone on another day.
    const days = h.store.db
      .prepare(`SELECT date(created_at, '+1 hour') AS day, group_concat(id) AS ids FROM bookings
        GROUP BY 1 HAVING count(*) >= 2 ORDER BY 1 DESC LIMIT 2`)
      .all() as Array<{ day: string; ids: string }>;
    const [overflowed, large] = days;
    if (!overflowed || !large) throw new Error("the data has too few busy days");
    const set = h.store.db.prepare("UPDATE bookings SET total_amount = ? WHERE id = ?");
    for (const id of overflowed.ids.split(",").slice(0, 2)) set.run(HUGE, id);
    set.run(HUGE, large.ids.split(",")[0]);
    set.run(0, large.ids.split(",")[1]);
    const db = analyst(h.dbPath);
    const sum = db.prepare("SELECT sum(total_amount) FROM daily_bookings_v WHERE day = ?").pluck();
    expect(sum.get(overflowed.day)).toBe(Number.POSITIVE_INFINITY); // what SQLite gives
    db.close();

    const html = await page();
    expect(html).not.toMatch(/NaN|Infinity|∞/);
    const revenue = chart(html, "revenue");
    for (const svg of [revenue, chart(html, "bookings")])
      for (const n of coordinates(svg)) expect(Number.isFinite(Number(n)), n).toBe(true);
    expect(revenue).toMatch(
      new RegExp(`<rect class="overflow" [^>]*height="150"><title>${overflowed.day}: overflow</title>`),
    );
    expect(revenue).toContain(`<title>${large.day}: ₦1.7e+308</title>`);
    expect(revenue).toContain(`too large to sum on ${overflowed.day}`);
    expect(revenue).toMatch(/class="max"[^>]*>₦1\.7e\+308</);
    expect(figure(html, "chart-revenue-total")).toBe("overflow");
    expect(html).toMatch(
      new RegExp(`<td>${overflowed.day}</td><td class="n">[\\d,]+</td><td class="n">overflow</td>`),
    );
  });
});

describe("syncs that keep failing", () => {
  it("put the cause above every figure: since when, how many runs, the error", async () => {
    h = await harness(DATA);
    expect((await h.sync()).status).toBe("success");
    for (let i = 0; i < 3; i++) {
      h.sim.inject({ kind: "401" }, { path: "feed" });
      expect((await h.sync()).status).toBe("failed");
    }
    const failed = h.store.db
      .prepare("SELECT started_at AS at, error FROM sync_runs WHERE status = 'failed' ORDER BY id")
      .all() as Array<{ at: string; error: string }>;
    expect(failed).toHaveLength(3);
    expect(new Set(failed.map((f) => f.error)).size).toBe(1);
    expect(failed[0]?.error).toMatch(/401/);

    const html = await page();
    const card = /<section aria-label="Sync failing"[^>]*>[\s\S]*?<\/section>/.exec(html)?.[0] ?? "";
    expect(card).toContain(`failing since ${when(failed[0]?.at ?? "")}: 3 runs in a row: `);
    expect(card).toContain("401");
    // Above the figures: the first thing after the page's heading.
    expect(html.indexOf(card)).toBeLessThan(html.indexOf('aria-label="Figures"'));
    expect(html.indexOf(card)).toBeGreaterThan(html.indexOf("</header>"));

    // A success ends it.
    expect((await h.sync()).status).toBe("success");
    expect(await page()).not.toContain('aria-label="Sync failing"');
  });

  it("show the cause beside never synced on a mirror that has never synced", async () => {
    h = await harness(DATA);
    for (let i = 0; i < 2; i++) {
      h.sim.inject({ kind: "401" }, { path: "feed" });
      expect((await h.sync()).status).toBe("failed");
    }
    const html = await page();
    expect(figure(html, "last-success")).toBe("never synced");
    const card = /<section aria-label="Sync failing"[^>]*>[\s\S]*?<\/section>/.exec(html)?.[0] ?? "";
    expect(card).toMatch(/failing since \d{4}-\d\d-\d\d [\d:]+ UTC: 2 runs in a row: [^<]*401/);
  });
});

describe("the details pass on the page", () => {
  it("says every booking has details when none lacks them, else how many do", async () => {
    h = await harness(DATA);
    expect((await h.sync({ details: true })).status).toBe("success");
    const lacking = h.store.db
      .prepare("SELECT count(*) FROM bookings WHERE detail_synced_at IS NULL")
      .pluck()
      .get();
    expect(lacking).toBe(0);
    const row = (html: string) => /<tr data-stream="details">[\s\S]*?<\/tr>/.exec(html)?.[0] ?? "";
    expect(row(await page())).toContain("<td>every booking has details</td>");
    expect(row(await page())).not.toContain("none yet");

    h.store.db.exec(
      "UPDATE bookings SET detail_synced_at = NULL WHERE id IN (SELECT id FROM bookings ORDER BY id LIMIT 3)",
    );
    expect(row(await page())).toContain("<td>3 bookings without details</td>");
  });
});
