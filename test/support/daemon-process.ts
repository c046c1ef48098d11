/**
 * The daemon (or any long-running CLI command) as a subprocess: its JSON log lines as they arrive,
 * waits on log lines and on its exit instead of sleeping, and small HTTP helpers for its endpoint.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { rmSync } from "node:fs";
import { request } from "node:http";
import { createServer } from "node:net";
import { afterEach } from "vitest";
import type { HttpServerHandle } from "../../src/daemon/http.js";
import { CLI, type Harness } from "./harness.js";

/** One pino JSON line of the daemon's stderr. */
export interface LogLine {
  level: number;
  msg?: string;
  [key: string]: unknown;
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface DaemonProcess {
  child: ChildProcess;
  pid: number;
  /** Parsed log lines so far (non-JSON lines are kept as `{ level: 0, msg: text }`). */
  lines: LogLine[];
  stdout(): string;
  stderr(): string;
  /** Resolves with the first line (already seen or still to come) that satisfies `match`. */
  waitForLog(match: (line: LogLine) => boolean, what?: string): Promise<LogLine>;
  /** Resolves once `count` lines satisfy `match`. */
  waitForLogs(match: (line: LogLine) => boolean, count: number, what?: string): Promise<LogLine[]>;
  /** Settles when the process has exited and its output is closed. */
  exited: Promise<Exit>;
}

/**
 * What a test of the daemon's endpoint starts, closed after each test: in-process servers, daemons
 * (killed if still running), a harness and a directory. Register it once at a test file's top.
 */
export function closedAfterEach() {
  const started = {
    servers: [] as HttpServerHandle[],
    daemons: [] as DaemonProcess[],
    harness: undefined as Harness | undefined,
    dir: undefined as string | undefined,
  };
  afterEach(async () => {
    await Promise.all(started.servers.splice(0).map((s) => s.close()));
    for (const d of started.daemons.splice(0)) {
      if (d.child.exitCode === null && d.child.signalCode === null) d.child.kill("SIGKILL");
      await d.exited;
    }
    await started.harness?.close();
    if (started.dir) rmSync(started.dir, { recursive: true, force: true });
    started.harness = started.dir = undefined;
  });
  return started;
}

/** Starts `node <args>` (default: the built CLI with `run`); the caller kills it. */
export function spawnDaemon(
  env: NodeJS.ProcessEnv,
  options: { args?: string[]; cwd?: string } = {},
): DaemonProcess {
  const args = options.args ?? [CLI, "run"];
  const child = spawn(process.execPath, args, { env, cwd: options.cwd, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  let partial = "";
  const lines: LogLine[] = [];
  const waiters = new Set<() => void>();
  child.stdout?.on("data", (d) => (stdout += d));
  child.stderr?.on("data", (d: Buffer) => {
    stderr += d;
    const parts = (partial + d.toString()).split("\n");
    partial = parts.pop() ?? "";
    for (const text of parts) if (text.trim()) lines.push(parseLine(text));
    for (const wake of [...waiters]) wake();
  });
  const exited = new Promise<Exit>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code, signal) => {
      resolve({ code, signal });
      for (const wake of [...waiters]) wake();
    });
  });
  let closed = false;
  void exited.then(() => {
    closed = true;
  });

  const waitForLogs = (match: (line: LogLine) => boolean, count: number, what = "a log line") =>
    new Promise<LogLine[]>((resolve, reject) => {
      const check = () => {
        const found = lines.filter(match);
        if (found.length >= count) {
          waiters.delete(check);
          resolve(found);
        } else if (closed) {
          waiters.delete(check);
          reject(new Error(`the process exited before ${count}× ${what}; its stderr:\n${tail(stderr)}`));
        }
      };
      waiters.add(check);
      check();
    });

  return {
    child,
    pid: child.pid ?? -1,
    lines,
    stdout: () => stdout,
    stderr: () => stderr,
    waitForLog: async (match, what) => (await waitForLogs(match, 1, what))[0] as LogLine,
    waitForLogs,
    exited,
  };
}

function parseLine(text: string): LogLine {
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed && typeof parsed === "object" && "level" in parsed) return parsed as LogLine;
  } catch {
    // Not pino's JSON: a CLI message such as "booking-sync: ..." on stderr.
  }
  return { level: 0, msg: text };
}

function tail(text: string): string {
  return text.split("\n").slice(-15).join("\n");
}

/** A port that was free a moment ago (listen on 0, read it, close). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === "string") throw new Error("no port");
  return address.port;
}

export interface HttpAnswer {
  status: number;
  text: string;
  /** The body parsed as JSON, when it is. */
  json: Record<string, unknown> | undefined;
}

/** One request; a refused connection resolves as status 0 (the endpoint is not up yet). */
export async function http(
  url: string,
  init: { method?: string; headers?: Record<string, string> } = {},
): Promise<HttpAnswer> {
  try {
    const res = await fetch(url, { ...init, signal: AbortSignal.timeout(10_000) });
    const text = await res.text();
    let json: Record<string, unknown> | undefined;
    try {
      json = JSON.parse(text) as Record<string, unknown>;
    } catch {
      json = undefined;
    }
    return { status: res.status, text, json };
  } catch {
    return { status: 0, text: "", json: undefined };
  }
}

/**
 * Polls `url` every `intervalMs` until `accept` says yes, for endpoints that emit no event (e.g.
 * /readyz); rejects with the last answer after `timeoutMs`.
 */
export async function pollUntil(
  url: string,
  accept: (answer: HttpAnswer) => boolean,
  { timeoutMs = 30_000, intervalMs = 50 } = {},
): Promise<HttpAnswer> {
  const deadline = Date.now() + timeoutMs;
  let last: HttpAnswer = { status: 0, text: "", json: undefined };
  while (Date.now() < deadline) {
    last = await http(url);
    if (accept(last)) return last;
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
  throw new Error(
    `${url} never gave the expected answer in ${timeoutMs} ms; last: ${last.status} ${last.text}`,
  );
}

/**
 * A request to `url` naming `host` in its Host header, as a page that rebound its own name to
 * 127.0.0.1 would send it (fetch does not let a caller set Host); its status.
 */
export function requestAsHost(url: string, host: string, method = "GET"): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers: { host } }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
    });
    req.on("error", reject);
    req.end();
  });
}
