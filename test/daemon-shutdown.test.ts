import { spawn } from "node:child_process";
import { EventEmitter, once } from "node:events";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { installShutdown, type ShutdownSignal, type SignalProcess } from "../src/daemon/shutdown.js";
import type { Logger } from "../src/sync/ports.js";

const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {} };

/** A process stand-in: the test emits signals; `exit` records the code instead of exiting. */
class FakeProcess extends EventEmitter implements SignalProcess {
  codes: number[] = [];
  readonly exited = new Promise<number>((resolve) => this.once("exit", resolve));
  override on(event: ShutdownSignal, listener: () => void): this {
    return super.on(event, listener);
  }
  override off(event: ShutdownSignal, listener: () => void): this {
    return super.off(event, listener);
  }
  exit(code: number): void {
    this.codes.push(code);
    this.emit("exit", code);
  }
}

function gate() {
  let open: () => void = () => undefined;
  let fail: (err: unknown) => void = () => undefined;
  const promise = new Promise<void>((resolve, reject) => {
    open = resolve;
    fail = reject;
  });
  return { promise, open, fail };
}

describe("shutdown (fake process)", () => {
  it("first signal runs onShutdown once and exits 0 only when it is done", async () => {
    const proc = new FakeProcess();
    const done = gate();
    const calls: ShutdownSignal[] = [];
    const handle = installShutdown({
      proc,
      logger: quiet,
      onShutdown: (signal) => {
        calls.push(signal);
        return done.promise;
      },
    });
    expect(handle.shuttingDown()).toBe(false);
    proc.emit("SIGTERM");
    await Promise.resolve();
    expect(calls).toEqual(["SIGTERM"]);
    expect(handle.shuttingDown()).toBe(true);
    expect(proc.codes).toEqual([]);
    done.open();
    expect(await proc.exited).toBe(0);
    expect(calls).toHaveLength(1);
    handle.dispose();
  });

  it.each([
    ["SIGTERM", 143],
    ["SIGINT", 130],
  ] as const)("a second %s exits at once with %i", async (second, code) => {
    const proc = new FakeProcess();
    const handle = installShutdown({ proc, logger: quiet, onShutdown: () => new Promise(() => undefined) });
    proc.emit("SIGINT");
    await Promise.resolve();
    proc.emit(second);
    expect(proc.codes).toEqual([code]);
    handle.dispose();
  });

  it("exits 1 when the graceful stop misses its deadline", async () => {
    const proc = new FakeProcess();
    const handle = installShutdown({
      proc,
      logger: quiet,
      timeoutMs: 50,
      onShutdown: () => new Promise(() => undefined),
    });
    proc.emit("SIGTERM");
    expect(await proc.exited).toBe(1);
    handle.dispose();
  });

  it("exits 1 when the graceful stop fails, and logs why", async () => {
    const proc = new FakeProcess();
    const errors: object[] = [];
    const handle = installShutdown({
      proc,
      logger: { ...quiet, error: (obj) => errors.push(obj) },
      onShutdown: () => Promise.reject(new Error("close database", { cause: new Error("SQLITE_BUSY") })),
    });
    proc.emit("SIGINT");
    expect(await proc.exited).toBe(1);
    expect(errors).toEqual([{ error: "close database: SQLITE_BUSY" }]);
    handle.dispose();
  });

  it("dispose() removes its listeners", () => {
    const proc = new FakeProcess();
    const handle = installShutdown({ proc, logger: quiet, onShutdown: async () => undefined });
    expect(proc.listenerCount("SIGTERM")).toBe(1);
    expect(proc.listenerCount("SIGINT")).toBe(1);
    handle.dispose();
    expect(proc.listenerCount("SIGTERM")).toBe(0);
    expect(proc.listenerCount("SIGINT")).toBe(0);
  });
});

describe("shutdown (real process and signals)", () => {
  let dir: string;
  let script: string;

  beforeAll(async () => {
    // Bundles a tiny program around the real module, so real signals reach the real `process`.
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "booking-sync-shutdown-"));
    script = path.join(dir, "child.mjs");
    const shutdownModule = fileURLToPath(new URL("../src/daemon/shutdown.ts", import.meta.url));
    await build({
      stdin: {
        contents: `
          import { installShutdown } from ${JSON.stringify(shutdownModule)};
          const log = (msg) => process.stdout.write(msg + "\\n");
          const logger = { debug() {}, info: (_o, m) => log(m), warn: (_o, m) => log(m), error: (_o, m) => log(m) };
          const hang = process.argv[2] === "hang";
          installShutdown({
            logger,
            onShutdown: () => new Promise((resolve) => { if (!hang) setTimeout(resolve, 50); }),
          });
          setInterval(() => {}, 1000); // the daemon's work, keeping the process alive
          log("ready");
        `,
        resolveDir: dir,
        loader: "js",
      },
      bundle: true,
      platform: "node",
      format: "esm",
      outfile: script,
      logLevel: "silent",
    });
  });

  afterAll(() => {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** Starts the child, waits for `ready`, sends the signals (each after the previous log line). */
  async function runChild(mode: "ok" | "hang", signals: NodeJS.Signals[]) {
    const child = spawn(process.execPath, [script, mode], { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    const waiters = new Set<() => void>();
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      for (const check of waiters) check();
    });
    const waitFor = (text: string) =>
      new Promise<void>((resolve) => {
        const check = () => {
          if (!out.includes(text)) return;
          waiters.delete(check);
          resolve();
        };
        waiters.add(check);
        check();
      });
    const exited = once(child, "close") as Promise<[number | null, NodeJS.Signals | null]>;
    await waitFor("ready");
    for (const [i, signal] of signals.entries()) {
      if (i > 0) await waitFor("shutting down");
      child.kill(signal);
    }
    const [code, signal] = await exited;
    return { code, signal, out };
  }

  it("exits 0 after a graceful stop on SIGTERM", async () => {
    const { code, signal, out } = await runChild("ok", ["SIGTERM"]);
    expect({ code, signal }).toEqual({ code: 0, signal: null });
    expect(out).toContain("shutdown complete");
  });

  it("exits 143 at once on a second SIGTERM while the stop hangs", async () => {
    const { code, out } = await runChild("hang", ["SIGTERM", "SIGTERM"]);
    expect(code).toBe(143);
    expect(out).toContain("second signal");
  });

  it("exits 130 on a second SIGINT", async () => {
    const { code } = await runChild("hang", ["SIGINT", "SIGINT"]);
    expect(code).toBe(130);
  });
});
