/**
 * A source whose error message holds terminal controls (a window title, a screen clear, a CR, C1
 * CSIs), through the CLI as a subprocess: the sync line, its error, the status table, the stale
 * reason and pretty logs on a terminal show each control as an escape; JSON keeps the message exact.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { errorText } from "../src/daemon/error-text.js";
import { ApiError } from "../src/errors.js";
import { createLogger } from "../src/logger.js";
import { HOSTILE_MESSAGE, rawControls, withoutColours } from "./support/controls.js";
import { CLI, runCli, runProcess } from "./support/harness.js";
import { closeServers, errorBody, json, serve } from "./support/scripted-server.js";

/** Long and unlike any word of the message, so scrubbing the token hides nothing else. */
const TOKEN = "tok-printable-5f0c1a9e7b";
const SHOWN = "quota \\u001b]0;pwned\\u0007\\u001b[2J\\rOVERWRITTEN\\u009b31m\\u009b";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "booking-sync-printable-"));
});
afterEach(() => {
  closeServers();
  rmSync(dir, { recursive: true, force: true });
});

/** A source that answers every request 400 with the hostile message, and the CLI's environment for it. */
async function hostileEnv(): Promise<NodeJS.ProcessEnv> {
  const { baseUrl } = await serve(json(400, errorBody(400, HOSTILE_MESSAGE)));
  return {
    ...process.env,
    BOOKING_API_BASE_URL: baseUrl,
    BOOKING_API_TOKEN: TOKEN,
    BOOKING_DB_PATH: join(dir, "bookings.db"),
    LOG_LEVEL: "info",
  };
}

/** JSON log lines of a CLI's stderr (not a terminal, so JSON). */
const logLines = (stderr: string) =>
  stderr
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as { msg: string; err?: { message: string } });

describe("source text printed by the CLI", () => {
  it("sync: the summary line and the error show every control; JSON log lines keep the message exactly", async () => {
    const r = await runCli(["sync"], await hostileEnv());
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^sync FAILED feed: 0 new/);
    expect(rawControls(r.stdout, "\n")).toEqual([]);
    expect(rawControls(r.stderr, "\n")).toEqual([]);
    const lines = r.stderr.trimEnd().split("\n");
    expect(lines.at(-1)).toBe(
      `booking-sync: fetch-recent-bookings: HTTP 400 Bad Request: ${SHOWN}${"\\u009b".repeat(11)} end`,
    );
    const failed = logLines(r.stderr).find((l) => l.msg.startsWith("sync failed"));
    expect(failed?.err?.message).toBe(`fetch-recent-bookings: HTTP 400 Bad Request: ${HOSTILE_MESSAGE}`);
  });

  it("status: the runs table cuts the error between whole escapes; --json has it exactly; the stale reason shows it", async () => {
    const env = await hostileEnv();
    expect((await runCli(["sync"], env)).code).toBe(1);

    const text = await runCli(["status"], env);
    expect(text.code).toBe(0);
    expect(rawControls(text.stdout, "\n")).toEqual([]);
    const row = text.stdout.split("\n").find((l) => /^\s+1\s+sync\s+feed\s+failed\s/.test(l));
    // 70 characters: "\u0007" would end at 71, so it is left out whole, not cut to "\u00".
    expect(row).toMatch(/ fetch-recent-bookings: HTTP 400 Bad Request: quota \\u001b\]0;pwned…$/);

    const asJson = await runCli(["status", "--json"], env);
    expect(rawControls(asJson.stdout, "\n")).toEqual([]);
    const status = JSON.parse(asJson.stdout) as { runs: Array<{ error: string }> };
    expect(status.runs[0]?.error).toBe(`fetch-recent-bookings: HTTP 400 Bad Request: ${HOSTILE_MESSAGE}`);

    const stale = await runCli(["status", "--max-age", "1d"], env);
    expect(stale.code).toBe(1);
    expect(stale.stderr).toContain(SHOWN);
    expect(rawControls(stale.stderr, "\n")).toEqual([]);
  });
});

/** util-linux script(1) runs a command on a pseudo-terminal: the CLI logs as it does for a person. */
const hasScript = process.platform === "linux" && spawnSync("script", ["--version"]).status === 0;

describe("pretty logs, as a terminal gets them", () => {
  it.skipIf(!hasScript)(
    "sync on a terminal: only colour sequences are raw, the source's show as escapes",
    async () => {
      const env = await hostileEnv();
      // -onlcr: the terminal would turn each LF into CR LF, and a CR is what the test looks for.
      const command = `stty -onlcr; exec '${process.execPath}' '${CLI}' sync`;
      const r = await runProcess("script", ["-qec", command, "/dev/null"], env);
      expect(r.code).toBe(1);
      expect(r.stdout).toContain(`sync failed: fetch-recent-bookings: HTTP 400 Bad Request: ${SHOWN}`);
      // pino-pretty's colours are the only sequences left.
      const { text, colours } = withoutColours(r.stdout);
      expect(colours).toBeGreaterThan(0);
      expect(rawControls(text, "\n")).toEqual([]);
    },
  );

  it("createLogger: pretty lines show the controls, a stack keeps its lines; JSON lines are exact and escape C1", () => {
    const err = new ApiError(`fetch-recent-bookings: ${HOSTILE_MESSAGE}`, { status: 400, retryable: false });
    const pretty = collect();
    createLogger({ level: "debug", pretty: true, destination: pretty.stream }).error(
      { err },
      `sync failed: ${err.message}`,
    );
    const text = withoutColours(pretty.text()).text;
    expect(text).toContain(`sync failed: fetch-recent-bookings: ${SHOWN}`);
    expect(text).toMatch(/\n\s+at /);
    expect(rawControls(text, "\n")).toEqual([]);

    const plain = collect();
    createLogger({ level: "info", pretty: false, destination: plain.stream }).error({ err }, "sync failed");
    expect(rawControls(plain.text(), "\n")).toEqual([]);
    const line = JSON.parse(plain.text()) as { err: { message: string } };
    expect(line.err.message).toBe(err.message);
  });
});

describe("daemon error text", () => {
  it("is one line whatever the causes hold: /readyz and logs show the controls", () => {
    const err = new Error("sync stream feed", {
      cause: new Error(`HTTP 400: ${HOSTILE_MESSAGE}\nsecond line`),
    });
    const text = errorText(err);
    expect(text).toBe(`sync stream feed: HTTP 400: ${SHOWN}${"\\u009b".repeat(11)} end\\nsecond line`);
    expect(rawControls(text)).toEqual([]);
  });
});

/** A stream that keeps what is written to it. */
function collect() {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk.toString());
      done();
    },
  });
  return { stream, text: () => chunks.join("") };
}
