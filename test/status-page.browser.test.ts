/**
 * The status page as a person sees it: `booking-sync run` as a subprocess after a real sync from the
 * simulator, its GET / opened in a real headless Chromium (playwright-core driving the system's
 * browser; nothing is downloaded). Waits on log lines and page events, never on sleeps.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BrowserContext, chromium } from "playwright-core";
import { afterEach, describe, expect, it } from "vitest";
import { type DaemonProcess, freePort, type LogLine, spawnDaemon } from "./support/daemon-process.js";
import { analyst, type Harness, harness } from "./support/harness.js";
import { personalValues } from "./support/status-page.js";

const CHROMIUM = "/usr/bin/chromium";
const HAVE_CHROMIUM = existsSync(CHROMIUM);
// CI installs Chromium (.ci/run) and must fail without it; elsewhere the test is skipped, and says so.
const SKIP = !HAVE_CHROMIUM && !process.env.CI;
if (SKIP)
  console.warn(`status-page.browser.test.ts skipped: no Chromium at ${CHROMIUM} (apt-get install chromium)`);

const NEVER = "0 0 1 1 *";
const TRIGGER_TOKEN = "trigger-token-for-the-browser-test";
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

let h: Harness | undefined;
let daemon: DaemonProcess | undefined;
let browser: BrowserContext | undefined;
let profile: string | undefined;
afterEach(async () => {
  await browser?.close();
  if (daemon && daemon.child.exitCode === null && daemon.child.signalCode === null)
    daemon.child.kill("SIGKILL");
  await daemon?.exited;
  await h?.close();
  if (profile) rmSync(profile, { recursive: true, force: true });
  browser = daemon = h = profile = undefined;
});

/** Chromium with a fresh profile in a temp folder; playwright takes the profile as an argument, not a flag. */
function launchChromium(dir: string): Promise<BrowserContext> {
  return chromium.launchPersistentContext(dir, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
    viewport: { width: 1280, height: 900 },
    timeout: 60_000,
  });
}

const finished = (l: LogLine) => l.msg === "sync finished" && l.status === "success";

/**
 * `n` bookings 90 minutes apart, the newest now; the daemon on a free port after its start-up sync,
 * and Chromium with a fresh profile, each also kept for `afterEach` to close.
 */
async function startDaemonAndBrowser(n: number) {
  const started = await harness({ bookings: n, spacingMs: 90 * 60_000 });
  h = started;
  const port = await freePort();
  const child = spawnDaemon(started.env({ HTTP_PORT: String(port), SYNC_SCHEDULE: NEVER, TRIGGER_TOKEN }));
  daemon = child;
  const dir = mkdtempSync(join(tmpdir(), "booking-sync-chromium-"));
  profile = dir;
  const [context] = await Promise.all([launchChromium(dir), child.waitForLog(finished, "the start-up sync")]);
  browser = context;
  return { port, h: started, daemon: child, browser: context, profile: dir };
}

describe.skipIf(SKIP)("the status page in Chromium", () => {
  it("shows both charts with 30 bars, the mirror's figures, and no person's data or token", {
    timeout: 120_000,
  }, async () => {
    if (!HAVE_CHROMIUM) throw new Error(`no Chromium at ${CHROMIUM}: CI must install it (see .ci/run)`);
    // 400 bookings 90 minutes apart, the newest now: 25 of the chart's 30 days have bookings.
    const { port, h, daemon, browser, profile } = await startDaemonAndBrowser(400);

    const page = await browser.newPage();
    const problems: string[] = [];
    page.on("console", (m) => {
      if (m.type() === "error") problems.push(m.text());
    });
    page.on("pageerror", (e) => problems.push(e.message));
    const res = await page.goto(`http://127.0.0.1:${port}/`, { waitUntil: "load", timeout: 30_000 });
    expect(res?.status()).toBe(200);
    expect(res?.headers()["content-security-policy"]).toContain("default-src 'none'");

    const screenshot = process.env.STATUS_PAGE_SCREENSHOT ?? join(profile, "status-page.png");
    await page.screenshot({ path: screenshot, fullPage: true });
    expect(statSync(screenshot).size).toBeGreaterThan(20_000);
    expect(readFileSync(screenshot).subarray(0, 8)).toEqual(PNG_SIGNATURE);

    for (const [id, name] of [
      ["bookings", /^Bookings per Lagos day/],
      ["revenue", /^Revenue \(sum of total_amount, NGN\) per Lagos day/],
    ] as const) {
      const svg = page.locator(`svg[data-chart="${id}"]`);
      expect(await svg.isVisible(), id).toBe(true);
      expect(await page.getByRole("img", { name }).count(), id).toBe(1);
      expect(await svg.locator("rect").count(), id).toBe(30);
      const drawn = await svg
        .locator("rect")
        .evaluateAll((rects) => rects.filter((r) => r.getBoundingClientRect().height > 0).length);
      expect(drawn, id).toBeGreaterThanOrEqual(24);
      // Scaled to the page's width with its drawing's proportions: neither squashed nor tiny.
      const box = await svg.boundingBox();
      expect(box?.width, id).toBeGreaterThan(600);
      expect((box?.width ?? 0) / (box?.height ?? 1), id).toBeCloseTo(720 / 200, 1);
    }

    const db = analyst(h.dbPath);
    const total = db.prepare("SELECT count(*) FROM bookings").pluck().get() as number;
    db.close();
    expect(total).toBe(400);
    expect(await page.locator('[data-figure="bookings-total"]').textContent()).toBe("400");
    expect(await page.locator('[data-figure="last-success"]').textContent()).toMatch(/^\d+s ago$/);

    const html = await page.content();
    const values = personalValues(h.dbPath, 20);
    expect(values.length).toBeGreaterThan(60);
    for (const value of [...values, TRIGGER_TOKEN, "sim-token"]) expect(html, value).not.toContain(value);
    // A style or anything else the CSP blocked would show here.
    expect(problems).toEqual([]);

    daemon.child.kill("SIGTERM");
    // A stop does not wait for the browser's idle connections.
    expect((await daemon.exited).code).toBe(0);
  });

  it("at 390 px: the failure's cause on the first screen, charts open on the newest days, labels readable", {
    timeout: 120_000,
  }, async () => {
    if (!HAVE_CHROMIUM) throw new Error(`no Chromium at ${CHROMIUM}: CI must install it (see .ci/run)`);
    // The newest booking now, one every 90 minutes: the chart's last days have bookings, its first none.
    const { port, h, daemon, browser, profile } = await startDaemonAndBrowser(200);
    // Then a sync the source refuses: the page must say why at once, not 850 px down.
    h.sim.inject({ kind: "401" }, { path: "feed" });
    const trigger = await fetch(`http://127.0.0.1:${port}/sync`, {
      method: "POST",
      headers: { authorization: `Bearer ${TRIGGER_TOKEN}` },
    });
    expect(trigger.status).toBe(202);
    await daemon.waitForLog((l) => l.status === "failed", "the refused sync");

    const page = await browser.newPage();
    await page.setViewportSize({ width: 390, height: 844 });
    const res = await page.goto(`http://127.0.0.1:${port}/`, { waitUntil: "load", timeout: 30_000 });
    expect(res?.status()).toBe(200);
    const screenshot = process.env.STATUS_PAGE_SCREENSHOT_NARROW ?? join(profile, "status-page-390.png");
    await page.screenshot({ path: screenshot, fullPage: true });
    expect(readFileSync(screenshot).subarray(0, 8)).toEqual(PNG_SIGNATURE);

    const failing = page.locator('[data-figure="failing"]');
    expect(await failing.textContent()).toMatch(/the last sync failed at .*401/);
    const box = await failing.boundingBox();
    expect(box?.y ?? 844, "the failing card's top").toBeLessThan(400);
    expect((box?.y ?? 0) + (box?.height ?? 844), "its bottom").toBeLessThan(844);

    for (const id of ["bookings", "revenue"]) {
      // Runs in the page; this project compiles without the DOM's types, so nothing here names one.
      const seen = await page.locator(`svg[data-chart="${id}"]`).evaluate((svg) => {
        const plot = svg.parentElement;
        const box = plot.getBoundingClientRect();
        const inView = (e: { getBoundingClientRect(): { left: number; right: number } }) => {
          const r = e.getBoundingClientRect();
          return r.left >= box.left - 0.5 && r.right <= box.right + 0.5;
        };
        const rects = [...svg.querySelectorAll("rect")];
        const texts = [...svg.querySelectorAll("text")];
        const first = texts[0];
        const newest = texts.at(-1);
        const px = Number.parseFloat(svg.ownerDocument.defaultView.getComputedStyle(first).fontSize);
        return {
          scrolls: plot.scrollWidth > box.width,
          newestInView: inView(rects.at(-1)),
          oldestInView: inView(rects[0]),
          drawnInView: rects.filter((r) => inView(r) && r.getBoundingClientRect().height > 0).length,
          newestLabel: inView(newest) ? newest.textContent : null,
          maxLabel: inView(svg.querySelector("text.max")),
          fontPx: px * (svg.getScreenCTM()?.a ?? 0),
        };
      });
      expect(seen, id).toMatchObject({
        scrolls: true,
        newestInView: true,
        oldestInView: false,
        maxLabel: true,
      });
      expect(seen.newestLabel, id).toMatch(/^\d{4}-\d\d-\d\d$/);
      expect(seen.drawnInView, id).toBeGreaterThanOrEqual(8);
      expect(seen.fontPx, id).toBeGreaterThanOrEqual(11);
    }
  });
});
