/**
 * Benchmark: how long /healthz waits while the status page is viewed over and over, on a large
 * mirror. Builds a SQLite mirror of `--bookings` bookings by bulk INSERTs into a migrated file (rows
 * the size of real ones: a summary and a full record each), serves it from a child process as the
 * daemon does (`openStore` + `startHttpServer`), then requests GET / in a loop while another loop
 * times GET /healthz, and prints /healthz's p50/p99/max and the page's own time.
 *
 *   npm run bench:status -- [--bookings 1000000] [--seconds 20] [--in-loop] [--db file] [--keep]
 *
 * `--in-loop` serves the page through the reader the daemon used before 2026-11-27 (the status reads
 * on the event loop, on a read-only connection), for the "before" figure. `--db` reuses (or keeps)
 * the built file, whose build takes most of a minute. Asserts nothing (targets in docs/performance.md).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import Database from "better-sqlite3";
import { createHealth } from "../dist/daemon/health.js";
import { startHttpServer } from "../dist/daemon/http.js";
import { createMetrics } from "../dist/daemon/metrics.js";
import { readStatusPage } from "../dist/store/daily.js";
import { openStore } from "../dist/store/index.js";
import { sqliteSnapshot } from "../dist/store/snapshot.js";

const SELF = fileURLToPath(import.meta.url);
/** Seconds between bookings: 1,000,000 of them span about two years, ~41,000 in the chart's 30 days. */
const SPACING_S = 63;
/** Lengths of a real mirror's stored JSON (the simulator's, with details): ~600 and ~4,000 characters. */
const SUMMARY_CHARS = 600;
const DETAIL_CHARS = 4000;

/** Fills a new, migrated mirror at `path` with `n` bookings, every one with details, in one statement. */
function build(path: string, n: number): void {
  openStore(path).close(); // the real schema, migrated
  const db = new Database(path);
  const started = performance.now();
  // A file nobody reads yet: no journal to speak of, no fsync; WAL again at the end, as the store has it.
  db.pragma("journal_mode = DELETE");
  db.pragma("synchronous = OFF");
  const now = Math.floor(Date.now() / 1000);
  const pad = "x".repeat(DETAIL_CHARS);
  db.prepare(`
    WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < $count - 1),
    b AS (SELECT i, printf('%024x', i) AS id,
      strftime('%Y-%m-%dT%H:%M:%fZ', $now - i * ${SPACING_S}, 'unixepoch') AS at FROM n)
    INSERT INTO bookings (id, search_id, source_platform, booking_type, created_at, booking_date, paid,
      booking_state, order_state, total_amount, weight, number_of_packages, summary_json, first_seen_at,
      summary_synced_at, detail_json, detail_synced_at, sub_total, booking_vat)
    SELECT id, 'S' || id, CASE i % 3 WHEN 0 THEN 'web' ELSE 'api' END, CASE i % 2 WHEN 0 THEN 'LC' ELSE 'IN' END,
      at, at, i % 2, 3, 6, 1000 + (i * 7919) % 50000, 11, 1,
      printf('{"_id":"%s","pad":"%s"}', id, substr($pad, 1, ${SUMMARY_CHARS - 40})), at, at,
      printf('{"_id":"%s","pad":"%s"}', id, $pad), at, 900 + (i * 7919) % 45000, 75
    FROM b`).run({ count: n, now, pad });
  const at = new Date(now * 1000).toISOString();
  db.prepare(`INSERT INTO sync_runs (kind, stream, started_at, finished_at, status, bookings_new,
    source_total, local_total) VALUES ('sync', 'feed', ?, ?, 'success', ?, ?, ?)`).run(at, at, n, n, n);
  db.prepare("INSERT INTO sync_state (stream, checkpoint, updated_at) VALUES ('feed', ?, ?)").run(at, at);
  db.pragma("journal_mode = WAL");
  db.close();
  console.log(`built ${n} bookings in ${((performance.now() - started) / 1000).toFixed(1)} s: ${path}`);
}

/** The child: the daemon's HTTP endpoint over the mirror at `path`, until SIGTERM. */
async function serve(path: string, inLoop: boolean): Promise<void> {
  const store = openStore(path);
  const reader = inLoop ? new Database(path, { readonly: true, fileMustExist: true }) : undefined;
  const inLoopSnapshot = reader ? sqliteSnapshot(reader, path) : undefined;
  const quiet = { debug() {}, info() {}, warn() {}, error() {} };
  const server = await startHttpServer({
    host: "127.0.0.1",
    port: 0,
    health: createHealth({ readyMaxAgeSeconds: 3600 }),
    registry: createMetrics({ processMetrics: false }).registry,
    trigger: () => ({ accepted: true, coalesced: false }),
    statusPage: () =>
      inLoopSnapshot
        ? inLoopSnapshot((r) => readStatusPage(r, new Date()))
        : store.readStatusPage(new Date()),
    logger: quiet,
  });
  // How late the event loop ran, apart from the machine's other load on the client's side.
  const delay = monitorEventLoopDelay({ resolution: 5 });
  delay.enable();
  const busy = performance.eventLoopUtilization();
  process.once("SIGTERM", () => {
    delay.disable();
    const { active, utilization } = performance.eventLoopUtilization(busy);
    const ms = (ns: number) => (ns / 1e6).toFixed(1);
    console.log(
      `server's event loop: delay p99 ${ms(delay.percentile(99))} ms, max ${ms(delay.max)} ms; ` +
        `busy ${(active / 1000).toFixed(2)} s (${(utilization * 100).toFixed(1)}%)`,
    );
    void server.close().then(() => {
      store.close();
      reader?.close();
    });
  });
  console.log(`listening at ${server.url}`);
}

/** VmRSS of a process, MB (Linux). */
function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? Number.NaN) / 1024;
}

function startServer(path: string, inLoop: boolean): Promise<{ url: string; child: ChildProcess }> {
  const args = [SELF, "--serve", "--db", path, ...(inLoop ? ["--in-loop"] : [])];
  // Its stdout after "listening" (the loop's delay at the end) goes to ours.
  const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "inherit"] });
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout?.on("data", (d) => {
      out += d;
      const m = /listening at (\S+)/.exec(out);
      if (!m?.[1]) return;
      child.stdout?.removeAllListeners("data");
      child.stdout?.pipe(process.stdout);
      resolve({ url: m[1], child });
    });
    child.on("exit", (code) => reject(new Error(`the server exited with ${code}`)));
  });
}

/**
 * Milliseconds until `url` answered, a retry included: a loop blocked past the server's keep-alive
 * timeout resets the connection a request was just sent on, which costs that request, not the run.
 */
async function timed(url: string): Promise<number> {
  const t = performance.now();
  for (let attempt = 1; ; attempt++) {
    try {
      const res = await fetch(url);
      await res.arrayBuffer();
      if (!res.ok) throw new Error(`${url}: HTTP ${res.status}`);
      return performance.now() - t;
    } catch (err) {
      if (attempt === 3) throw err;
    }
  }
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

/**
 * Asks /healthz every 10 ms for `seconds`, viewing the page back to back meanwhile when `view`
 * (without, the figures are the machine's own noise).
 */
async function measure(
  url: string,
  seconds: number,
  view: boolean,
): Promise<{ healthz: number[]; views: number[] }> {
  const until = performance.now() + seconds * 1000;
  const healthz: number[] = [];
  const views: number[] = [];
  const viewer = (async () => {
    while (view && performance.now() < until) views.push(await timed(`${url}/`));
  })();
  while (performance.now() < until) {
    healthz.push(await timed(`${url}/healthz`));
    await sleep(10);
  }
  await viewer;
  return { healthz, views };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      bookings: { type: "string", default: "1000000" },
      seconds: { type: "string", default: "20" },
      "in-loop": { type: "boolean", default: false },
      db: { type: "string" },
      keep: { type: "boolean", default: false },
      serve: { type: "boolean", default: false },
    },
  });
  const inLoop = values["in-loop"];
  if (values.serve) return serve(values.db as string, inLoop);
  const dir = values.db ? undefined : mkdtempSync(join(tmpdir(), "booking-sync-status-"));
  const path = values.db ?? join(dir as string, "bookings.db");
  if (!existsSync(path)) build(path, Number(values.bookings));
  const { url, child } = await startServer(path, inLoop);
  try {
    const seconds = Number(values.seconds);
    const quiet = await measure(url, seconds / 4, false);
    const idle = rssMb(child.pid as number);
    const { healthz, views } = await measure(url, seconds, true);
    const ms = (n: number) => `${n.toFixed(1)} ms`;
    const spread = (xs: number[]) => {
      const sorted = [...xs].sort((a, b) => a - b);
      return `p50 ${ms(percentile(sorted, 50))}, p99 ${ms(percentile(sorted, 99))}, max ${ms(sorted.at(-1) ?? Number.NaN)}`;
    };
    console.log(`no page views: /healthz x${quiet.healthz.length}: ${spread(quiet.healthz)}`);
    console.log(
      `${inLoop ? "in-loop reader (before)" : "worker thread (after)"}: ${views.length} page views ` +
        `(${spread(views)}); /healthz x${healthz.length}: ${spread(healthz)}; ` +
        `server RSS ${idle.toFixed(0)} MB before the first view, ${rssMb(child.pid as number).toFixed(0)} MB after`,
    );
  } finally {
    child.kill("SIGTERM");
    await once(child, "close");
    if (dir && !values.keep) rmSync(dir, { recursive: true, force: true });
  }
}

await main();
