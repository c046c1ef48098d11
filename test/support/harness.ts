/**
 * Real pieces wired for a test: the bundled simulator on 127.0.0.1:0, a SQLite file in a temp dir,
 * the real API client (fast backoff), and the CLI as a subprocess.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { createApiClient } from "../../src/api/client.js";
import { systemClock } from "../../src/app.js";
import { type Simulator, type SimulatorOptions, startSimulator } from "../../src/simulator/index.js";
import type { BatchRule } from "../../src/store/batch.js";
import { acquireLease, openStore, type Store } from "../../src/store/index.js";
import type { Logger, PartnerApi, TimerClock } from "../../src/sync/ports.js";
import { runSync, type SyncOptions } from "../../src/sync/run-sync.js";
import { memoryLogger } from "./fakes.js";

/** A file of the build (`npm run build`), for tests that run it in a subprocess. */
export const dist = (file: string) => join(import.meta.dirname, "../../dist", file);
export const CLI = dist("cli.js");

export interface Harness {
  dir: string;
  dbPath: string;
  sim: Simulator;
  store: Store;
  logger: ReturnType<typeof memoryLogger>;
  sync(options?: Partial<SyncOptions>): ReturnType<typeof runSync>;
  /** Ids in the mirror. */
  mirrorIds(): string[];
  /** Ids the simulator serves (optionally one booking type). */
  sourceIds(bookingType?: "IN" | "LC"): string[];
  /** Environment for a CLI subprocess against this simulator and database. */
  env(extra?: Record<string, string>): NodeJS.ProcessEnv;
  close(): Promise<void>;
}

export type HarnessOptions = SimulatorOptions & {
  pageSize?: number;
  /** Wraps the real client, e.g. to change the source between two requests. */
  wrapApi?: ((api: PartnerApi) => PartnerApi) | undefined;
  /** Times the store's batch commits (a test clock holds a batch open); default the system's. */
  storeClock?: TimerClock | undefined;
  /** The store's batch rule; default the product's. */
  storeBatch?: BatchRule | undefined;
};

/** The bundled simulator (seed 11 unless given) and the real API client to it, with fast backoff. */
export async function simulatedSource(
  options: HarnessOptions,
  logger: Logger,
): Promise<{ sim: Simulator; api: PartnerApi }> {
  const sim = await startSimulator({ seed: 11, ...options });
  const api = createApiClient({
    baseUrl: sim.url,
    token: "sim-token",
    minBackoffMs: 1,
    maxBackoffMs: 20,
    maxRetryAfterMs: 50,
    logger,
  });
  return { sim, api: options.wrapApi ? options.wrapApi(api) : api };
}

/** Ids the simulator serves (optionally of one booking type), sorted as `ORDER BY id` sorts them. */
export function servedIds(sim: Simulator, bookingType?: "IN" | "LC"): string[] {
  return sim
    .allSummaries(bookingType ? { bookingType } : {})
    .map((b) => b._id)
    .sort();
}

export async function harness(options: HarnessOptions = {}): Promise<Harness> {
  const dir = mkdtempSync(join(tmpdir(), "booking-sync-"));
  const dbPath = join(dir, "bookings.db");
  const logger = memoryLogger();
  const { sim, api } = await simulatedSource(options, logger);
  const store = openStore(dbPath, { clock: options.storeClock, batch: options.storeBatch });
  const deps = {
    api,
    store,
    clock: systemClock,
    logger,
    signal: new AbortController().signal,
  };
  const pageSize = options.pageSize ?? 100;
  return {
    dir,
    dbPath,
    sim,
    store,
    logger,
    sync: (o = {}) => runSync(deps, { pageSize, lookbackSeconds: 600, ...o }),
    // Through another connection: what is committed, not what the store's open batch holds.
    mirrorIds: () => {
      const db = analyst(dbPath);
      try {
        return db.prepare("SELECT id FROM bookings ORDER BY id").pluck().all() as string[];
      } finally {
        db.close();
      }
    },
    sourceIds: (bookingType) => servedIds(sim, bookingType),
    env: (extra = {}) => ({
      ...process.env,
      BOOKING_API_BASE_URL: sim.url,
      BOOKING_API_TOKEN: "sim-token",
      BOOKING_DB_PATH: dbPath,
      SYNC_PAGE_SIZE: String(pageSize),
      LOG_LEVEL: "info",
      ...extra,
    }),
    async close() {
      store.close();
      await sim.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs the CLI asynchronously (a synchronous spawn would block the in-process simulator).
 * `onSpawn` gets the child, e.g. to kill it when an event arrives; `cli` another build's CLI.
 */
export function runCli(
  args: string[],
  env: NodeJS.ProcessEnv,
  onSpawn?: (child: ChildProcess) => void,
  cli = CLI,
): Promise<CliResult> {
  return runNode([cli, ...args], env, onSpawn);
}

/** Runs `node <args>` and collects its output; `onSpawn` gets the child. */
export function runNode(
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
  onSpawn?: (child: ChildProcess) => void,
): Promise<CliResult> {
  return runProcess(process.execPath, args, env, onSpawn);
}

/** Runs `file <args>` asynchronously and collects its output; `onSpawn` gets the child. */
export function runProcess(
  file: string,
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
  onSpawn?: (child: ChildProcess) => void,
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr }));
    onSpawn?.(child);
  });
}

/** Opens the database as an analyst would: a separate read-only connection, no busy timeout. */
export function analyst(dbPath: string): Database.Database {
  return new Database(dbPath, { readonly: true, fileMustExist: true, timeout: 0 });
}

/** Takes the writer lease as a live process on this host (the test runner) would hold it. */
export function holdWriterLease(store: Store, holder = "test:holder"): boolean {
  const held = acquireLease(store, {
    name: "writer",
    holder,
    ttlMs: 60_000,
    now: new Date(),
    pid: process.pid,
  });
  return held.acquired;
}
