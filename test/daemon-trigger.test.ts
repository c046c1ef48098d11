/**
 * The trigger rule: POST /sync needs the trigger token whenever the endpoint is bound beyond
 * loopback; without one it is refused there (403), while the health endpoints keep answering.
 * Real HTTP: a bind on 0.0.0.0 is reached through 127.0.0.1, as another container would reach it.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createHealth } from "../src/daemon/health.js";
import { startHttpServer } from "../src/daemon/http.js";
import { createMetrics } from "../src/daemon/metrics.js";
import type { Logger } from "../src/sync/ports.js";
import { closedAfterEach, freePort, http, requestAsHost, spawnDaemon } from "./support/daemon-process.js";
import { harness } from "./support/harness.js";

const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {} };
const TRIGGER = "trg-51c0-distinctive-secret";
const REFUSAL =
  "POST /sync is refused: the endpoint listens on 0.0.0.0, beyond loopback, and no trigger token is set; " +
  "set TRIGGER_TOKEN or TRIGGER_TOKEN_FILE";

const started = closedAfterEach();

/** The real endpoint on `host`, port 0; returns its loopback URL and the triggers it passed on. */
async function endpoint(host: string, triggerToken?: string) {
  const triggers: number[] = [];
  const server = await startHttpServer({
    host,
    port: 0,
    health: createHealth({ readyMaxAgeSeconds: 60 }),
    registry: createMetrics({ processMetrics: false }).registry,
    trigger: () => {
      triggers.push(triggers.length + 1);
      return { accepted: true, coalesced: false };
    },
    triggerToken,
    logger: quiet,
  });
  started.servers.push(server);
  const url = `http://127.0.0.1:${server.port}`;
  const post = (authorization?: string) =>
    http(`${url}/sync`, { method: "POST", headers: authorization ? { authorization } : {} });
  return { url, triggers, post };
}

describe("the trigger on a bind beyond loopback", () => {
  it("is refused (403, saying to set TRIGGER_TOKEN or TRIGGER_TOKEN_FILE) on 0.0.0.0 without a token; health keeps answering", async () => {
    const { url, triggers, post } = await endpoint("0.0.0.0");
    const res = await post();
    expect(res.status).toBe(403);
    expect(res.json).toEqual({ error: REFUSAL });
    // A bearer header changes nothing: there is no token to compare it with.
    expect((await post("Bearer anything")).status).toBe(403);
    expect(triggers).toEqual([]);
    expect((await http(`${url}/healthz`)).status).toBe(200);
    expect((await http(`${url}/readyz`)).status).toBe(503);
    expect((await http(`${url}/metrics`)).status).toBe(200);
  });

  it("needs the token on 0.0.0.0 when one is set: 401 without or with a wrong one, 202 with it", async () => {
    const { triggers, post } = await endpoint("0.0.0.0", TRIGGER);
    for (const header of [undefined, "Bearer wrong", `Bearer ${TRIGGER}x`, TRIGGER]) {
      const res = await post(header);
      expect(res.status, String(header)).toBe(401);
      expect(res.text).not.toContain(TRIGGER);
    }
    expect(triggers).toEqual([]);
    expect((await post(`Bearer ${TRIGGER}`)).status).toBe(202);
    expect(triggers).toEqual([1]);
  });

  it("stays open on 127.0.0.1 without a token, where only this machine reaches it", async () => {
    const { triggers, post, url } = await endpoint("127.0.0.1");
    expect((await post()).status).toBe(202);
    expect(triggers).toEqual([1]);
    // Only to requests that name a loopback host: not to a page that rebound its name to 127.0.0.1.
    expect(await requestAsHost(`${url}/sync`, "localhost:8080", "POST")).toBe(202);
    expect(await requestAsHost(`${url}/sync`, "rebound.example:8080", "POST")).toBe(403);
    expect(triggers).toEqual([1, 2]);
  });

  it("the daemon on 0.0.0.0 without a token warns at start-up and refuses the trigger; /healthz answers", async () => {
    const h = await harness({ bookings: 20 });
    started.harness = h;
    const port = await freePort();
    const d = spawnDaemon(
      h.env({ HTTP_PORT: String(port), HTTP_HOST: "0.0.0.0", SYNC_SCHEDULE: "0 0 1 1 *" }),
    );
    started.daemons.push(d);
    const startLine = await d.waitForLog(
      (l) => String(l.msg).startsWith("booking-sync run:"),
      "the start line",
    );
    expect(startLine.trigger).toBe("refused");
    expect(d.lines.some((l) => l.level === 40 && l.msg === REFUSAL)).toBe(true);
    const url = `http://127.0.0.1:${port}`;
    expect((await http(`${url}/healthz`)).status).toBe(200);
    const res = await http(`${url}/sync`, { method: "POST" });
    expect(res.status).toBe(403);
    expect(res.json).toEqual({ error: REFUSAL });
  });

  it("the daemon on 0.0.0.0 takes its trigger token from TRIGGER_TOKEN_FILE, and the token appears in no log line", async () => {
    const h = await harness({ bookings: 20 });
    started.harness = h;
    const dir = mkdtempSync(join(tmpdir(), "booking-sync-trigger-"));
    started.dir = dir;
    const file = join(dir, "trigger");
    writeFileSync(file, `${TRIGGER}\n`);
    const port = await freePort();
    const d = spawnDaemon(
      h.env({
        HTTP_PORT: String(port),
        HTTP_HOST: "0.0.0.0",
        SYNC_SCHEDULE: "0 0 1 1 *",
        TRIGGER_TOKEN_FILE: file,
        LOG_LEVEL: "trace",
      }),
    );
    started.daemons.push(d);
    const startLine = await d.waitForLog(
      (l) => String(l.msg).startsWith("booking-sync run:"),
      "the start line",
    );
    expect(startLine.trigger).toBe("token");
    await d.waitForLog((l) => l.msg === "sync finished", "the start-up sync");
    const url = `http://127.0.0.1:${port}`;
    expect((await http(`${url}/sync`, { method: "POST" })).status).toBe(401);
    const res = await http(`${url}/sync`, {
      method: "POST",
      headers: { authorization: `Bearer ${TRIGGER}` },
    });
    expect(res.status).toBe(202);
    await d.waitForLogs((l) => l.msg === "sync finished", 2, "the triggered sync");
    d.child.kill("SIGTERM");
    expect((await d.exited).code).toBe(0);
    expect(d.stdout() + d.stderr()).not.toContain(TRIGGER);
  });
});
