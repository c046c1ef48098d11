/**
 * The CLI as a user runs it: a subprocess, its exit code and its output, against the simulator and
 * a real SQLite file.
 */
import type { ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { SETTINGS } from "../src/config/settings.js";
import { analyst, type Harness, harness, holdWriterLease, runCli } from "./support/harness.js";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const SECRET = "tok-3f9a1c-very-secret";

describe("booking-sync CLI", () => {
  it("`--help | head` ends quietly with the command's exit code, no stack trace", async () => {
    // The read end closes before the CLI has started, so its first write meets EPIPE, as under `| head -1`.
    const r = await runCli(["--help"], process.env, (child) => child.stdout?.destroy());
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
  });

  it("a sync whose log reader left early (`2>&1 | head`) still syncs, and a refusal keeps its exit 2", async () => {
    h = await harness({ bookings: 300 });
    const closed = (child: ChildProcess) => child.stderr?.destroy();
    const r = await runCli(["sync"], h.env({ LOG_LEVEL: "debug" }), closed);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("300 new");
    const db = analyst(h.dbPath);
    expect((db.prepare("SELECT count(*) AS n FROM bookings").get() as { n: number }).n).toBe(300);
    db.close();
    const refused = await runCli(["status", "--db", `${h.dbPath}.absent`], process.env, closed);
    expect(refused.code).toBe(2);
  });

  it("a daemon whose log reader left stops, exit 1, for its supervisor to restart it with its logs", async () => {
    h = await harness({ bookings: 300 });
    let guard: NodeJS.Timeout | undefined;
    const r = await runCli(["run"], h.env({ HTTP_PORT: "0" }), (child) => {
      child.stderr?.destroy();
      // A daemon that syncs on unseen would run until stopped: a stop is exit 0, which fails below.
      guard = setTimeout(() => child.kill("SIGTERM"), 20_000);
    });
    clearTimeout(guard);
    expect(r.code).toBe(1);
  });

  it("--help lists every environment variable and exits 0, showing no token", async () => {
    const r = await runCli(["--help"], { ...process.env, BOOKING_API_TOKEN: SECRET });
    expect(r.code).toBe(0);
    for (const s of SETTINGS) if (s.env) expect(r.stdout).toContain(s.env);
    expect(r.stdout + r.stderr).not.toContain(SECRET);
  });

  it("a bad setting exits 2 with one line naming the variable, the value and what is accepted", async () => {
    const r = await runCli(["sync"], {
      ...process.env,
      BOOKING_API_BASE_URL: "http://127.0.0.1:9/api/v2",
      BOOKING_API_TOKEN: SECRET,
      SYNC_LOOKBACK_SECONDS: "soon",
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('SYNC_LOOKBACK_SECONDS = "soon" is not valid: expected whole seconds');
    expect(r.stderr).toMatch(/^Try: /m);
  });

  it("sync without a base URL is a config error, never a default API", async () => {
    const r = await runCli(["sync"], { ...process.env, BOOKING_API_BASE_URL: "", BOOKING_API_TOKEN: SECRET });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("BOOKING_API_BASE_URL is not set");
  });

  it("an unknown option is a usage error (exit 2)", async () => {
    const r = await runCli(["sync", "--no-such-flag"], process.env);
    expect(r.code).toBe(2);
  });

  it("a rejected token exits 1 with a clear message and writes no bookings", async () => {
    h = await harness({ bookings: 50 });
    const r = await runCli(["sync"], h.env({ BOOKING_API_TOKEN: SECRET }));
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("Invalid or expired token");
    expect(r.stdout + r.stderr).not.toContain(SECRET);
    expect(h.mirrorIds()).toEqual([]);
    expect(h.store.lastRun("sync")).toMatchObject({ status: "failed", requests: 1, retries: 0 });
  });

  it("prints a one-line summary and exits 0; the token appears in no log line, even at debug", async () => {
    h = await harness({ bookings: 400, token: SECRET, pageSize: 50 });
    h.sim.inject([{ kind: "5xx" }, { kind: "429", retryAfter: 0 }]);
    const r = await runCli(["sync"], h.env({ BOOKING_API_TOKEN: SECRET, LOG_LEVEL: "debug" }));
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(
      /^sync feed: 400 new, 0 updated, \d+ unchanged · \d+ pages, \d+ requests \(2 retries\)/,
    );
    expect(r.stderr).toMatch(/retry|retrying/i);
    expect(r.stdout + r.stderr).not.toContain(SECRET);
  });

  it("a run killed mid-walk (SIGKILL) resumes on the next run and ends complete, without starting over", async () => {
    h = await harness({ bookings: 3000, tieRun: 4, pageSize: 10, latencyMs: 5 });
    let feedRequests = 0;
    const killed = await runCli(["sync"], h.env(), (child) => {
      h?.sim.events.on("request", (e) => {
        if (e.endpoint === "feed" && ++feedRequests === 120) child.kill("SIGKILL");
      });
    });
    expect(killed.signal).toBe("SIGKILL");
    const partial = h.mirrorIds().length;
    expect(partial).toBeGreaterThan(0);
    expect(partial).toBeLessThan(3000);
    expect(h.store.readStream("feed").walk).not.toBeNull();
    expect(h.store.readStream("feed").checkpoint).toBeNull();

    h.sim.resetStats();
    const rerun = await runCli(["sync"], h.env());
    expect(rerun.code).toBe(0);
    expect(rerun.stderr).toContain("resuming the unfinished walk");
    // The killed run's lease did not make the rerun wait out its lifetime.
    expect(rerun.stderr).toContain("took over the writer lease of a process that no longer runs");
    expect(h.mirrorIds()).toEqual(h.sourceIds());
    // The rerun read the rest of the feed (about 300 pages after the killed run's 120), not all
    // ~410 again.
    expect(h.sim.stats.byEndpoint.feed).toBeLessThan(350);
    expect(h.store.readStream("feed").walk).toBeNull();
  });

  it("a second writer on the same database is refused and told who holds it", async () => {
    h = await harness({ bookings: 50 });
    // A live process on this host (the test runner itself, as seen from the CLI) holds the lease.
    expect(holdWriterLease(h.store, "test:holder")).toBe(true);
    const r = await runCli(["sync"], h.env());
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`another booking-sync is writing to this database (pid ${process.pid} on`);
    expect(h.mirrorIds()).toEqual([]);
  });

  it("an analyst reading during a sync never sees 'database is locked'", async () => {
    h = await harness({ bookings: 4000, pageSize: 20, latencyMs: 2 });
    // The database exists before the sync starts, as it would for an analyst.
    h.store.readStream("feed");
    expect(existsSync(h.dbPath)).toBe(true);
    const reader = analyst(h.dbPath);
    let reads = 0;
    let done = false;
    const errors: unknown[] = [];
    const sync = runCli(["sync"], h.env({ LOG_LEVEL: "warn" })).finally(() => {
      done = true;
    });
    while (!done) {
      try {
        reader.prepare("SELECT count(*), sum(total_amount) FROM bookings WHERE paid = 1").get();
        reads++;
      } catch (err) {
        errors.push(err);
      }
      await new Promise((r) => setImmediate(r));
    }
    const r = await sync;
    reader.close();
    expect(r.code).toBe(0);
    expect(errors).toEqual([]);
    expect(reads).toBeGreaterThan(10);
  });
});
