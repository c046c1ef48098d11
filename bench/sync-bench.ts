/**
 * Benchmark: a cold sync, into SQLite and into PostgreSQL, against a bare fetch-and-parse loop over
 * the same feed pages; then the cold start of `booking-sync run` against its floor (bench/cold-start.ts).
 *
 *   npm run bench -- [--bookings 200000] [--page-size 100] [--latency-ms 0] [--rounds 3]
 *                    [--backends sqlite,postgres] [--skip-cold-start] [--concurrency 8] [--timeout-s 600]
 *   npm run bench -- --cold-start [--bookings 50000] [--latency-ms 50] [--concurrency 8] [--timeout-s 600]
 *
 * The first form runs both figures: `--bookings`, `--page-size`, `--latency-ms`, `--rounds` and
 * `--backends` shape the sync figure, and the cold start runs at the settings (50,000
 * bookings, 50 ms latency), with `--concurrency` (its SYNC_CONCURRENCY and its floor's pages in
 * flight) and `--timeout-s` (after which it is reported as not complete instead of waited for);
 * `--skip-cold-start` leaves it out. The second form runs the cold start alone, with `--bookings`
 * and `--latency-ms` its own; the large figure is
 * `npm run bench -- --cold-start --bookings 1000000 --latency-ms 100 --concurrency 16` (minutes).
 *
 * Modes: `bare` (the loop), `client` (the same pages through the sync's API client, nothing kept),
 * `sync` (a fresh SQLite file, one page at a time, so the ratio is a page's
 * own cost) and `sync-postgres` (a fresh database on a PostgreSQL server); with SQLite, also
 * `sync-default`: the same cold sync at SYNC_CONCURRENCY's default, whose fill walks slices in
 * parallel, as `booking-sync sync --no-details` on an empty mirror runs. `--backends` picks the syncs (default
 * both). The server is the one BOOKING_BENCH_POSTGRES_URL names (its user must be allowed to CREATE
 * DATABASE; each run gets a new database, dropped afterwards), else a throwaway one started from the
 * newest local initdb and stopped at the end. If neither can be had, the Postgres column is skipped
 * with a line saying so, unless `--backends` or BOOKING_BENCH_POSTGRES_URL asked for it.
 *
 * The simulator runs in its own process so it does not share our event loop, and each mode runs in
 * a fresh process so its peak RSS is its own. After one bare run that warms the simulator (not
 * counted), each round runs every mode once, in an order that rotates from round to round, and
 * the best run of each mode counts. Prints the figures; asserts nothing (targets in
 * docs/performance.md).
 *
 * Besides wall time and peak RSS, each mode reports its CPU time and the peaks of the
 * main thread's V8 heap and of memory outside it (`external`: buffers and the like), sampled every
 * 50 ms; RSS beyond those is native: code, thread stacks, SQLite's page cache, other isolates.
 * PostgreSQL works in processes of its own: for a throwaway server, their CPU time during the run
 * is printed as `server CPU`.
 */
import { execFileSync } from "node:child_process";
import { parseArgs } from "node:util";
import { DEFAULT_CONCURRENCY } from "../dist/config/settings.js";
import { type ColdStartOptions, coldStart } from "./cold-start.js";
import {
  createDatabase,
  type PostgresServer,
  pingPostgres,
  postgresBinDir,
  serverCpuMs,
  startThrowawayPostgres,
} from "./postgres-server.js";
import { startSimulatorProcess } from "./simulator-process.js";
import { MODES, type Mode, type Result, runMode } from "./sync-modes.js";

const SELF = new URL(import.meta.url).pathname;
/**
 * Each measured run is a fresh process started as this one was (with the memory flags
 * `npm run bench` passes, the launcher's), so it runs as the CLI does.
 */
const NODE_ARGS = process.execArgv;

const BACKENDS = { sqlite: "sync", postgres: "sync-postgres" } as const;
type Backend = keyof typeof BACKENDS;

/**
 * The measured server is durable, as one that keeps a mirror is: PostgreSQL's defaults, spelled out.
 * Never fsync off here (the tests' server has it off): SQLite's WAL file survives a crash intact,
 * and a Postgres that might not would flatter it. synchronous_commit=on is if anything stricter
 * than SQLite's synchronous=NORMAL: an fsync per commit, which comes every 20 pages.
 */
const DURABLE_SETTINGS = ["-c fsync=on -c synchronous_commit=on -c full_page_writes=on"];

function measure(mode: Mode, url: string, pageSize: number, databaseUrl?: string): Result {
  const args = [...NODE_ARGS, SELF, "--mode", mode, "--url", url, "--page-size", String(pageSize)];
  if (databaseUrl) args.push("--database", databaseUrl);
  const out = execFileSync(process.execPath, args, { encoding: "utf8", maxBuffer: 1 << 20 });
  return JSON.parse(out.trim().split("\n").at(-1) as string) as Result;
}

/** A sync into a new database on `server`, dropped afterwards; with the server's CPU when known. */
async function measurePostgres(server: PostgresServer, url: string, pageSize: number): Promise<Result> {
  const db = await createDatabase(server.url, "booking_bench");
  try {
    const before = server.pid ? serverCpuMs(server.pid) : undefined;
    const result = measure("sync-postgres", url, pageSize, db.url);
    const after = server.pid ? serverCpuMs(server.pid) : undefined;
    if (before !== undefined && after !== undefined) result.serverCpuMs = after - before;
    return result;
  } finally {
    await db.drop();
  }
}

/** The `--backends` asked for; an error names the flag and the bad value. */
function parseBackends(value: string): Backend[] {
  const names = value.split(",").map((s) => s.trim());
  const bad = names.find((n) => !Object.hasOwn(BACKENDS, n));
  if (bad !== undefined)
    throw new Error(`--backends: "${bad}" is not a backend. Try: --backends sqlite,postgres`);
  return [...new Set(names as Backend[])];
}

/**
 * The server for the Postgres column, or undefined (with a line saying so) when none can be had
 * and nobody insisted on one.
 */
async function findServer(insisted: boolean): Promise<PostgresServer | undefined> {
  const given = process.env.BOOKING_BENCH_POSTGRES_URL;
  try {
    if (given) {
      await pingPostgres(given, "BOOKING_BENCH_POSTGRES_URL");
      return { url: given, stop: () => {} };
    }
    const bin = postgresBinDir();
    if (!bin) throw new Error("no initdb found (in /usr/lib/postgresql/*/bin or on PATH)");
    return await startThrowawayPostgres(bin, DURABLE_SETTINGS);
  } catch (err) {
    if (insisted || given) throw err;
    console.log(`PostgreSQL: ${(err as Error).message}; the Postgres column is skipped`);
    return undefined;
  }
}

function line(r: Result): string {
  const server = r.serverCpuMs === undefined ? "" : `, server CPU ${(r.serverCpuMs / 1000).toFixed(2)} s`;
  return (
    `${r.mode.padEnd(13)} ${r.bookings} bookings, ${r.pages} pages in ${(r.ms / 1000).toFixed(2)} s` +
    ` = ${Math.round(r.bookings / (r.ms / 1000))} bookings/s, CPU ${(r.cpuMs / 1000).toFixed(2)} s${server},` +
    ` peak RSS ${r.peakRssMb.toFixed(0)} MB (main heap ${r.peakHeapMb.toFixed(0)} MB,` +
    ` external ${r.peakExternalMb.toFixed(0)} MB)`
  );
}

/** A flag's whole number from `min` up; an error names the flag and the bad value. */
function whole(flag: string, value: string, min = 0): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < min) {
    throw new Error(
      `--${flag}: "${value}" is not a whole number from ${min}. Try: --${flag} ${Math.max(min, 1)}`,
    );
  }
  return n;
}

const OPTIONS = {
  mode: { type: "string" },
  url: { type: "string" },
  database: { type: "string" },
  bookings: { type: "string" },
  "page-size": { type: "string" },
  "latency-ms": { type: "string" },
  rounds: { type: "string" },
  backends: { type: "string" },
  "cold-start": { type: "boolean" },
  "skip-cold-start": { type: "boolean" },
  concurrency: { type: "string", default: "8" },
  "timeout-s": { type: "string", default: "600" },
} as const;
type Values = ReturnType<typeof parseArgs<{ options: typeof OPTIONS }>>["values"];

async function main(): Promise<void> {
  const { values } = parseArgs({ options: OPTIONS });
  const pageSize = whole("page-size", values["page-size"] ?? "100", 1);
  if (values.mode !== undefined) {
    const mode = MODES.find((m) => m === values.mode);
    if (!mode) throw new Error(`--mode: "${values.mode}" is not one of ${MODES.join(", ")}`);
    return runMode(mode, values.url as string, pageSize, values.database);
  }
  // A signal ends the run through "exit", whose listeners stop a throwaway server and the daemon.
  for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => process.exit(1));
  const cold: ColdStartOptions = {
    bookings: 50_000,
    latencyMs: 50,
    concurrency: whole("concurrency", values.concurrency, 1),
    timeoutS: whole("timeout-s", values["timeout-s"], 1),
  };
  if (values["cold-start"]) {
    const misplaced = (["page-size", "rounds", "backends", "skip-cold-start"] as const).find(
      (f) => values[f],
    );
    if (misplaced) throw new Error(`--${misplaced} shapes the sync figure, which --cold-start leaves out`);
    if (values.bookings !== undefined) cold.bookings = whole("bookings", values.bookings, 1);
    if (values["latency-ms"] !== undefined) cold.latencyMs = whole("latency-ms", values["latency-ms"]);
    return coldStart(cold);
  }
  await syncFigure(values, pageSize);
  if (!values["skip-cold-start"]) await coldStart(cold);
}

/** Today's figure: a cold `sync` into each backend against the bare feed loop, best of `--rounds`. */
async function syncFigure(values: Values, pageSize: number): Promise<void> {
  const backends = parseBackends(values.backends ?? "sqlite,postgres");
  const bookings = whole("bookings", values.bookings ?? "200000", 1);
  const latencyMs = whole("latency-ms", values["latency-ms"] ?? "0");
  const rounds = whole("rounds", values.rounds ?? "3", 1);
  const server = backends.includes("postgres") ? await findServer(values.backends !== undefined) : undefined;
  const modes: Mode[] = [
    "bare",
    "client",
    ...backends.filter((b) => b === "sqlite" || server).map((b) => BACKENDS[b]),
  ];
  if (backends.includes("sqlite")) modes.push("sync-default");
  try {
    const { url, child } = await startSimulatorProcess(bookings, latencyMs);
    process.once("exit", () => child.kill("SIGTERM"));
    try {
      console.log(
        `feed of ${bookings} bookings, ${pageSize} a page, latency ${latencyMs} ms, simulator in its own process` +
          (server ? `, PostgreSQL at ${new URL(server.url).host}` : ""),
      );
      const run = (mode: Mode) =>
        mode === "sync-postgres" && server
          ? measurePostgres(server, url, pageSize)
          : measure(mode, url, pageSize);
      const best = await bestOf(modes, rounds, run);
      for (const mode of modes) console.log(line(best.get(mode) as Result));
      printRatios(best, rounds);
    } finally {
      child.kill("SIGTERM");
    }
  } finally {
    server?.stop();
  }
}

/** The fastest run of each mode over `rounds` rounds, after one bare run that is not counted. */
async function bestOf(
  modes: Mode[],
  rounds: number,
  run: (mode: Mode) => Result | Promise<Result>,
): Promise<Map<Mode, Result>> {
  // The simulator serializes each booking once and serves it from its cache after.
  await run("bare");
  const best = new Map<Mode, Result>();
  for (let round = 0; round < rounds; round++) {
    // Each round starts with another mode, so none always runs on a warmer machine.
    const order = modes.map((_, i) => modes[(i + round) % modes.length] as Mode);
    const times: string[] = [];
    for (const mode of order) {
      const r = await run(mode);
      times.push(`${mode} ${(r.ms / 1000).toFixed(2)} s`);
      const prior = best.get(mode);
      if (!prior || r.ms < prior.ms) best.set(mode, r);
    }
    console.log(`round ${round + 1}: ${times.join(", ")}`);
  }
  return best;
}

function printRatios(best: Map<Mode, Result>, rounds: number): void {
  const ms = (mode: Mode) => best.get(mode)?.ms;
  const [bare, sqlite, postgres, byDefault, client] = MODES.map(ms);
  const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}x`;
  if (bare && sqlite)
    console.log(
      `sync / bare = ${ratio(sqlite, bare)} (a page's cost; target <= 3.5x at 0 ms, <= 1.15x at 10 ms latency)`,
    );
  if (bare && client && sqlite)
    console.log(
      `client / bare = ${ratio(client, bare)}, sync / client = ${ratio(sqlite, client)} (the page's cost split: the API client's, then the store's)`,
    );
  if (bare && byDefault)
    console.log(
      `sync-default / bare = ${ratio(byDefault, bare)} (a cold sync --no-details as the CLI runs it, ${DEFAULT_CONCURRENCY} requests in flight, against the one-at-a-time loop)`,
    );
  if (bare && postgres) {
    const vsSqlite = sqlite
      ? `; sync-postgres / sync = ${ratio(postgres, sqlite)} (target <= 1.2x at 10 ms latency)`
      : "";
    console.log(`sync-postgres / bare = ${ratio(postgres, bare)}${vsSqlite}`);
  }
  console.log(`best of ${rounds} each, interleaved`);
}

await main();
