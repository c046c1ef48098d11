/**
 * Security as an operator meets it, through the built CLI as a subprocess: base URLs refused
 * before any connection, and the tokens absent from every place they could leak to at rest or on
 * display (the database and its WAL, the runs' status, the metrics, --help).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { networkInterfaces, tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { closedAfterEach, freePort, http, spawnDaemon } from "./support/daemon-process.js";
import { analyst, type Harness, harness, runCli } from "./support/harness.js";
import { closeServers, errorBody, serve } from "./support/scripted-server.js";

const SECRET = "tok-77c1-distinctive-secret";
const TRIGGER = "trg-2b9e-distinctive-secret";

let h: Harness | undefined;
let dir: string | undefined;
let server: Server | undefined;
// Registered first, so it runs after the daemons are killed (vitest runs after-hooks as a stack).
afterEach(async () => {
  closeServers();
  server?.closeAllConnections();
  server?.close();
  await h?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
  h = dir = server = undefined;
});
const { daemons } = closedAfterEach();

/** The environment of a fresh shell: none of this project's variables from the test runner's. */
function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !/^(BOOKING_|SYNC_|TRIGGER_|HTTP_)/.test(k)),
  );
  dir ??= mkdtempSync(join(tmpdir(), "booking-sync-security-"));
  return { ...env, BOOKING_DB_PATH: join(dir, "data", "bookings.db"), LOG_LEVEL: "debug", ...extra };
}

/** An address of this machine that is not loopback, if it has one. */
function outsideAddress(): string | undefined {
  for (const list of Object.values(networkInterfaces()))
    for (const a of list ?? []) if (a.family === "IPv4" && !a.internal) return a.address;
  return undefined;
}

/** A server on every interface that answers 401 and counts what reached it. */
async function listenEverywhere(): Promise<{ port: number; hits: string[] }> {
  const hits: string[] = [];
  server = createServer((req, res) => {
    hits.push(req.url ?? "");
    res.writeHead(401, { "content-type": "application/json" });
    res.end(JSON.stringify(errorBody(401, "Invalid or expired token")));
  });
  await new Promise<void>((resolve) => server?.listen(0, "0.0.0.0", resolve));
  return { port: (server.address() as AddressInfo).port, hits };
}

describe("base URLs refused before any connection", () => {
  it.each([["sync"], ["run"], ["backfill"]])(
    "`%s` with credentials in the URL exits 2, says so without the password, and nothing reaches the server",
    async (command) => {
      const srv = await serve(() => undefined);
      const url = srv.baseUrl.replace("http://", "http://operator:hunter2-pw@");
      const r = await runCli([command], cleanEnv({ BOOKING_API_BASE_URL: url, BOOKING_API_TOKEN: SECRET }));
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(
        `booking-sync: BOOKING_API_BASE_URL = "${srv.baseUrl.replace("http://", "http://***@")}" is not valid: expected a URL without user:password@`,
      );
      expect(r.stderr).toMatch(/^Try: remove the credentials/m);
      expect(r.stdout + r.stderr).not.toContain("hunter2");
      expect(r.stdout + r.stderr).not.toContain(SECRET);
      expect(srv.hits).toHaveLength(0);
      expect(existsSync(join(dir as string, "data"))).toBe(false);
    },
  );

  const outside = outsideAddress();
  it.skipIf(!outside)(
    "plain http to this machine's non-loopback address exits 2 and reaches no server; BOOKING_API_ALLOW_INSECURE=true lets it through",
    async () => {
      const { port, hits } = await listenEverywhere();
      const url = `http://${outside}:${port}/api/v2`;
      const refused = await runCli(
        ["sync"],
        cleanEnv({ BOOKING_API_BASE_URL: url, BOOKING_API_TOKEN: SECRET }),
      );
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain(
        `booking-sync: BOOKING_API_BASE_URL = "${url}" is not valid: expected an https URL (plain http only to localhost, 127.0.0.0/8 or ::1, or with BOOKING_API_ALLOW_INSECURE=true)`,
      );
      expect(refused.stderr).toMatch(/^Try: use https:\/\//m);
      expect(hits).toHaveLength(0);
      // The same URL, allowed: the request does reach the server (which refuses the token).
      const allowed = await runCli(
        ["sync"],
        cleanEnv({
          BOOKING_API_BASE_URL: url,
          BOOKING_API_TOKEN: SECRET,
          BOOKING_API_ALLOW_INSECURE: "true",
        }),
      );
      expect(allowed.code).toBe(1);
      expect(allowed.stderr).toContain("the token is sent over plain http");
      expect(hits.length).toBeGreaterThan(0);
    },
  );
});

describe("where the tokens never appear", () => {
  it("--help lists the security settings and shows neither token", async () => {
    const r = await runCli(["--help"], cleanEnv({ BOOKING_API_TOKEN: SECRET, TRIGGER_TOKEN: TRIGGER }));
    expect(r.code).toBe(0);
    for (const name of ["BOOKING_API_ALLOW_INSECURE", "BOOKING_DB_MODE", "TRIGGER_TOKEN_FILE"])
      expect(r.stdout).toContain(name);
    expect(r.stdout + r.stderr).not.toContain(SECRET);
    expect(r.stdout + r.stderr).not.toContain(TRIGGER);
  });

  it("the database, its WAL, the runs' status (sync_runs, /readyz) and the metrics of a running daemon hold neither token", async () => {
    h = await harness({ bookings: 300, token: SECRET, pageSize: 50 });
    // The start-up run fails (its error is stored); the triggered one succeeds.
    h.sim.inject([{ kind: "401" }]);
    const port = await freePort();
    const d = spawnDaemon(
      h.env({
        HTTP_PORT: String(port),
        SYNC_SCHEDULE: "0 0 1 1 *",
        BOOKING_API_TOKEN: SECRET,
        TRIGGER_TOKEN: TRIGGER,
        SYNC_DETAILS: "true",
        LOG_LEVEL: "trace",
      }),
    );
    daemons.push(d);
    await d.waitForLog(
      (l) => l.status === "failed" && String(l.msg).startsWith("sync failed"),
      "a failed run",
    );
    const url = `http://127.0.0.1:${port}`;
    const ready = await http(`${url}/readyz`);
    expect(ready.json?.lastError).toMatch(/401/);
    expect(ready.text).not.toContain(SECRET);
    expect(
      (await http(`${url}/sync`, { method: "POST", headers: { authorization: `Bearer ${TRIGGER}` } })).status,
    ).toBe(202);
    await d.waitForLog((l) => l.msg === "sync finished" && l.status === "success", "the triggered sync");

    // While the daemon runs, the WAL holds the latest pages.
    expect(statSync(`${h.dbPath}-wal`).size).toBeGreaterThan(0);
    const metrics = (await http(`${url}/metrics`)).text;
    expect(metrics).toContain("booking_sync_runs_total");
    const files = () =>
      [h?.dbPath as string, `${h?.dbPath}-wal`].map((f) => readFileSync(f).toString("latin1"));
    for (const text of [...files(), metrics]) {
      expect(text).not.toContain(SECRET);
      expect(text).not.toContain(TRIGGER);
    }
    d.child.kill("SIGTERM");
    expect((await d.exited).code).toBe(0);

    const db = analyst(h.dbPath);
    const runs = db.prepare("SELECT * FROM sync_runs ORDER BY id").all() as {
      status: string;
      error: string;
    }[];
    db.close();
    expect(runs.map((r) => r.status)).toEqual(["failed", "success"]);
    expect(runs[0]?.error).toContain("401");
    for (const text of [JSON.stringify(runs), ...files()]) {
      expect(text).not.toContain(SECRET);
      expect(text).not.toContain(TRIGGER);
    }
  });

  it("a server that echoes the token in its error leaves it in neither the output nor the run's stored error", async () => {
    const srv = await serve((req, res) => {
      res.writeHead(400, { "content-type": "application/json" });
      res.end(JSON.stringify(errorBody(400, `bad header ${req.headers.authorization}`)));
    });
    const env = cleanEnv({
      BOOKING_API_BASE_URL: srv.baseUrl,
      BOOKING_API_TOKEN: SECRET,
      LOG_LEVEL: "trace",
    });
    const r = await runCli(["sync"], env);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("[redacted]");
    expect(r.stdout + r.stderr).not.toContain(SECRET);
    const dbPath = env.BOOKING_DB_PATH as string;
    const db = analyst(dbPath);
    const error = db.prepare("SELECT error FROM sync_runs ORDER BY id DESC LIMIT 1").pluck().get() as string;
    db.close();
    expect(error).toContain("bad header Bearer [redacted]");
    for (const file of [dbPath, `${dbPath}-wal`])
      expect(readFileSync(file).toString("latin1")).not.toContain(SECRET);
  });
});

describe("where the PostgreSQL password never appears", () => {
  it("a database that cannot be reached is named with its password hidden, at every log level", async () => {
    const port = await freePort();
    const url = `postgres://sync:${SECRET}@127.0.0.1:${port}/bookings`;
    for (const level of ["info", "debug"]) {
      const r = await runCli(["migrate"], cleanEnv({ BOOKING_DB_URL: url, LOG_LEVEL: level }));
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`postgres://sync:***@127.0.0.1:${port}/bookings`);
      expect(r.stdout + r.stderr).not.toContain(SECRET);
    }
  });
});
