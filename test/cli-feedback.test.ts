/**
 * What the CLI tells an operator when something is wrong, run as a subprocess against the bundled
 * simulator (or a small node:http server) and real SQLite files: each message names the cause and
 * what to check, never the token.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { openStore } from "../src/store/index.js";
import { CLI, type CliResult, type Harness, harness, holdWriterLease, runCli } from "./support/harness.js";
import { type OtherUser, otherUser } from "./support/other-user.js";

let h: Harness | undefined;
let server: Server | undefined;
afterEach(async () => {
  if (server) {
    server.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
    server = undefined;
  }
  await h?.close();
  h = undefined;
});

const SECRET = "tok-5be1d2-very-secret";
const VERSION = (
  JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string }
).version;

/** JSON log lines of a CLI's stderr (not a terminal, so JSON). */
function logLines(stderr: string): Array<Record<string, unknown>> {
  return stderr
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** A server on 127.0.0.1:0 that accepts requests and never answers them. */
async function hungServer(): Promise<string> {
  server = createServer(() => undefined);
  await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v2`;
}

/** A port the OS gave out and that nothing listens on any more: connections are refused. */
async function refusedUrl(): Promise<string> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, "127.0.0.1", resolve));
  const { port } = s.address() as AddressInfo;
  await new Promise((resolve) => s.close(resolve));
  return `http://127.0.0.1:${port}/api/v2`;
}

describe("CLI feedback: refusals say what to check", () => {
  it("a 401 on sync names BOOKING_API_TOKEN / BOOKING_API_TOKEN_FILE, never the token", async () => {
    h = await harness({ bookings: 50 });
    const r = await runCli(["sync"], h.env({ BOOKING_API_TOKEN: SECRET }));
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      "booking-sync: fetch-recent-bookings: HTTP 401 Unauthorized: Invalid or expired token\n",
    );
    expect(r.stderr).toContain(
      "Try: check BOOKING_API_TOKEN or BOOKING_API_TOKEN_FILE (whichever is set): the partner API refused the token\n",
    );
    expect(r.stdout + r.stderr).not.toContain(SECRET);
  });

  it("a 401 during backfill says the token was refused, counts the request, and gives no resume advice", async () => {
    h = await harness({ bookings: 300 });
    const r = await runCli(["backfill", "--concurrency", "1"], h.env({ BOOKING_API_TOKEN: SECRET }));
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^backfill FAILED feed: 0 new, .* · 0 pages, 1 request · /);
    expect(r.stdout + r.stderr).not.toMatch(/run it again|resume/);
    expect(r.stderr).toContain("Try: check BOOKING_API_TOKEN or BOOKING_API_TOKEN_FILE");
    expect(r.stderr).toContain("the partner API refused the token");
    expect(r.stdout + r.stderr).not.toContain(SECRET);
  });

  it("a backfill that failed on something a rerun can fix still says to run it again", async () => {
    h = await harness({ bookings: 300 });
    h.sim.inject({ kind: "5xx" }, { path: "list" });
    const r = await runCli(["backfill", "--concurrency", "1", "--max-retries", "0"], h.env());
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/· run it again to resume\n$/);
    expect(r.stderr).not.toContain("Try:");
  });

  it("a 404 from a base URL without /api/v2 says the URL must end in /api/v2", async () => {
    h = await harness({ bookings: 50 });
    const base = h.sim.url.replace(/\/api\/v2$/, "");
    const r = await runCli(["sync"], h.env({ BOOKING_API_BASE_URL: base }));
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("HTTP 404 Not Found: Route not found");
    expect(r.stderr).toContain(
      "Try: check BOOKING_API_BASE_URL: it must end in /api/v2, e.g. https://host/api/v2 " +
        "(this server has no route /partner/booking/fetch-recent-bookings)",
    );
    expect(h.store.lastRun("sync")).toMatchObject({ status: "failed" });
  });

  it("a malformed base URL is a config error that says it is required, not 'unset it for the default'", async () => {
    const r = await runCli(["sync"], {
      ...process.env,
      BOOKING_API_BASE_URL: "partner.example/api/v2",
      BOOKING_API_TOKEN: SECRET,
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      'booking-sync: BOOKING_API_BASE_URL = "partner.example/api/v2" is not valid: expected an http(s) URL ' +
        "including /api/v2, e.g. https://host/api/v2\n" +
        "Try: fix BOOKING_API_BASE_URL: it is required and has no default\n",
    );
  });

  it("reads --booking-type and booleans by the one rule, in any letter case", async () => {
    h = await harness({ bookings: 200 });
    const r = await runCli(
      ["sync", "--booking-type", "in"],
      h.env({ SYNC_DETAILS: "TRUE", LOG_LEVEL: "WARN" }),
    );
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^sync feed:IN: \d+ new, .* · details: /);
    const bad = await runCli(["sync"], h.env({ SYNC_PAGE_SIZE: "5e1" }));
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain(
      'SYNC_PAGE_SIZE = "5e1" is not valid: expected a whole number from 3 to 100',
    );
  });
});

describe("CLI feedback: a source that does not answer is not silent", () => {
  it.each([
    ["a hung server", hungServer, /Timeout awaiting 'request' for 100ms/],
    ["an unreachable host", refusedUrl, /ECONNREFUSED/],
  ])(
    "%s: each retry is logged at warn with its cause and wait; trace logs each request",
    async (_, url, cause) => {
      const r = await runCli(["sync"], {
        ...process.env,
        BOOKING_API_BASE_URL: await url(),
        BOOKING_API_TOKEN: SECRET,
        BOOKING_DB_PATH: join(tempDir(), "bookings.db"),
        SYNC_TIMEOUT_MS: "100",
        SYNC_MAX_RETRIES: "2",
        LOG_LEVEL: "trace",
      });
      expect(r.code).toBe(1);
      const lines = logLines(r.stderr);
      const retries = lines.filter((l) => l.level === 40 && /retry \d of 2 in/.test(String(l.msg)));
      expect(retries.map((l) => l.attempt)).toEqual([1, 2]);
      for (const l of retries) {
        expect(l).toMatchObject({ endpoint: "fetch-recent-bookings", maxRetries: 2 });
        expect(String(l.cause)).toMatch(cause);
        expect(l.msg).toContain(String(l.cause));
        expect(typeof l.waitMs).toBe("number");
      }
      const requests = lines.filter((l) => l.level === 10 && l.method === "GET");
      expect(requests).toHaveLength(3);
      for (const [k, l] of requests.entries()) {
        expect(l).toMatchObject({
          endpoint: "fetch-recent-bookings",
          query: { limit: "100" },
          attempt: k + 1,
        });
        expect(l.outcome).toBe(k < 2 ? "retry" : "error");
        expect(typeof l.durationMs).toBe("number");
      }
      expect(r.stdout + r.stderr).not.toContain(SECRET);
    },
  );

  it("trace logs each successful request with its status, and never the token", async () => {
    h = await harness({ bookings: 150, token: SECRET, pageSize: 100 });
    const r = await runCli(["sync"], h.env({ BOOKING_API_TOKEN: SECRET, LOG_LEVEL: "trace" }));
    expect(r.code).toBe(0);
    const requests = logLines(r.stderr).filter((l) => l.level === 10 && l.method === "GET");
    expect(requests.length).toBeGreaterThanOrEqual(2);
    expect(requests[0]).toMatchObject({
      endpoint: "fetch-recent-bookings",
      status: 200,
      outcome: "ok",
      query: { limit: "100" },
    });
    expect(requests.some((l) => l.endpoint === "list-bookings")).toBe(true);
    expect(r.stdout + r.stderr).not.toContain(SECRET);
  });
});

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) {
    chmodSync(dir, 0o755);
    rmSync(dir, { recursive: true, force: true });
  }
});

function tempDir(): string {
  const dir = join(
    process.env.TMPDIR ?? "/tmp",
    `booking-sync-feedback-${process.pid}-${Math.random().toString(36).slice(2)}`,
  );
  mkdirSync(dir, { mode: 0o755 });
  dirs.push(dir);
  return dir;
}

/**
 * Root is not held back by file modes, so as root the CLI runs as `nobody` (65534), from a build
 * that user can reach (support/other-user.ts); any other user runs it as itself. A string says why
 * it cannot run as another user here: then these tests are skipped, and their name says why.
 */
const other: OtherUser | string | null =
  process.getuid?.() === 0 ? otherUser(join(import.meta.dirname, "..")) : null;
const runAs = typeof other === "string" ? null : other;
const cannot = typeof other === "string" ? other : undefined;

/** Runs the CLI as `runAs` (or as this user when that is null). */
function runCliAs(args: string[], env: NodeJS.ProcessEnv): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const as = runAs ? { uid: runAs.uid, gid: runAs.gid, cwd: "/" } : {};
    const child: ChildProcess = spawn(process.execPath, [runAs?.cli ?? CLI, ...args], {
      env,
      stdio: ["ignore", "pipe", "pipe"],
      ...as,
    });
    let stdout = "";
    let stderr = "";
    child.stdout?.on("data", (d) => (stdout += d));
    child.stderr?.on("data", (d) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

const unwritable = `CLI feedback: a database it cannot write${cannot ? ` (skipped: ${cannot})` : ""}`;
describe.skipIf(cannot !== undefined)(unwritable, () => {
  afterAll(() => runAs?.cleanup());
  const uid = runAs ? runAs.uid : (process.getuid?.() ?? 0);
  /** Gives `path` (and a database's -wal and -shm, if there) to the user the CLI runs as. */
  const own = (path: string) => {
    if (!runAs) return;
    for (const each of [path, `${path}-wal`, `${path}-shm`])
      if (existsSync(each)) chownSync(each, runAs.uid, runAs.gid);
  };
  const fix = "make the file and its folder writable by this user, or point BOOKING_DB_PATH (--db) elsewhere";

  it("a read-only file: the path, the cause (permission, for which uid) and the fix", async () => {
    h = await harness({ bookings: 20 });
    const dir = tempDir();
    own(dir);
    const dbPath = join(dir, "bookings.db");
    openStore(dbPath).close();
    own(dbPath);
    chmodSync(dbPath, 0o444);
    const r = await runCliAs(["sync"], h.env({ BOOKING_DB_PATH: dbPath }));
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      `booking-sync: cannot write ${dbPath}: permission denied (the file is read-only for uid ${uid}: ` +
        `mode 0444, owner uid ${uid}); ${fix}\n`,
    );
    expect(h.sim.stats.requests).toBe(0);
  });

  it("a read-only folder: the folder, the cause and the fix, for a new file and an existing one", async () => {
    h = await harness({ bookings: 20 });
    const dir = tempDir();
    own(dir);
    const existing = join(dir, "existing.db");
    openStore(existing).close();
    own(existing);
    chmodSync(dir, 0o555);
    for (const dbPath of [join(dir, "new.db"), existing]) {
      const r = await runCliAs(["sync"], h.env({ BOOKING_DB_PATH: dbPath }));
      expect(r.code).toBe(1);
      expect(r.stderr).toBe(
        `booking-sync: cannot write ${dbPath}: permission denied (its folder ${dir} is read-only for uid ${uid}: ` +
          `mode 0555, owner uid ${uid}); ${fix}\n`,
      );
    }
    const nested = join(dir, "sub", "bookings.db");
    const r = await runCliAs(["migrate"], { ...process.env, BOOKING_DB_PATH: nested });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      `cannot write ${nested}: permission denied (${dir}, where its folder would be created,`,
    );
  });
});

describe("CLI feedback: runs a killed process left behind", () => {
  it("a run killed with SIGKILL is marked interrupted by the next sync, with finished_at set", async () => {
    h = await harness({ bookings: 2000, pageSize: 10, latencyMs: 2 });
    let feedRequests = 0;
    const killed = await runCli(["sync"], h.env(), (child) => {
      h?.sim.events.on("request", (e) => {
        if (e.endpoint === "feed" && ++feedRequests === 30) child.kill("SIGKILL");
      });
    });
    expect(killed.signal).toBe("SIGKILL");
    const left = h.store.lastRun("sync");
    expect(left).toMatchObject({ status: "running", finishedAt: null });

    const rerun = await runCli(["sync"], h.env());
    expect(rerun.code).toBe(0);
    expect(rerun.stderr).toContain("marked 1 run(s) a stopped process left running as interrupted");
    const row = h.store.recentRuns(5).find((run) => run.id === left?.id);
    expect(row).toMatchObject({ status: "interrupted" });
    expect(row?.finishedAt).toMatch(/^\d{4}-\d{2}-\d{2}T/);
    expect(row?.error).toMatch(/^interrupted: /);
    expect(h.store.lastRun("sync")).toMatchObject({ status: "success" });
  });

  it("a run another live process holds the writer lease for is left running", async () => {
    h = await harness({ bookings: 20 });
    const runId = h.store.startRun({
      kind: "sync",
      stream: "feed",
      startedAt: new Date().toISOString(),
      checkpointBefore: null,
    });
    expect(holdWriterLease(h.store, "test:live")).toBe(true);
    const r = await runCli(["sync"], h.env());
    expect(r.code).toBe(1);
    expect(h.store.recentRuns(5).find((run) => run.id === runId)).toMatchObject({
      status: "running",
      finishedAt: null,
    });
  });
});

describe("CLI feedback: --version", () => {
  it.each([["--version"], ["-V"]])("%s prints the package's version and exits 0", async (flag) => {
    const r = await runCli([flag], process.env);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`${VERSION}\n`);
    expect(r.stderr).toBe("");
  });

  it("runs as an installed `booking-sync` does: the launcher's `#!` line, memory flags and all", () => {
    // npm makes the `bin` file executable on install; the build does not.
    chmodSync(CLI, 0o755);
    const r = spawnSync(CLI, ["--version"], { encoding: "utf8" });
    expect(r.error).toBeUndefined();
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe(`${VERSION}\n`);
  });
});
