/**
 * Benchmark of booking events (issue 26), each target printed beside its figure:
 *
 *   npm run bench:events -- [--bookings 100000] [--rounds 3 | --pairs 10] [--period-s 5]
 *                           [--latency-rounds 5] [--postgres] [--skip-fill | --fill-only] [--details]
 *
 * 1. Fill: a cold `booking-sync sync --no-details` of `--bookings` from the simulator at 0 ms
 *    latency into a fresh SQLite file, with events and with EVENTS_RETENTION_DAYS=0 (none recorded),
 *    `--rounds` (or `--pairs`) pairs, alternating which goes first; the median of the pairs' ratios,
 *    of wall and of CPU time, and the ratio of the bests (target <= 1.1x). `--fill-only` stops there.
 *    The feed walk is where events are written; the details pass writes none, so leaving it out
 *    makes the ratio the harsher one; `--details` measures the fill as a first `sync` runs it.
 * 2. Delivery: `booking-sync run`, the real daemon as a subprocess (production's path: the lease,
 *    the commit wake-ups, its own process and RSS), with EVENTS_WEBHOOK_URL to a receiver in this
 *    process that verifies every signature with `standardwebhooks`. Backlog: on a mirror the fill
 *    left with its events, undelivered; live: on an empty mirror, filling and delivering at once.
 *    Seconds from the first message to the last event (target <= 20 s), and the daemon's RSS
 *    sampled every 100 ms in between (memory flat: min and max). `--postgres` adds the backlog on a
 *    throwaway PostgreSQL server (BOOKING_BENCH_POSTGRES_URL if set).
 * 3. Latency: `run` with SYNC_SCHEDULE every `--period-s` seconds on a small in-process simulator;
 *    one booking inserted per round, at another point of the period each time: the delay from the
 *    cron tick after the insert (and from the sync's first feed request) to the receipt of its
 *    `booking.created` (target: within one tick + 1 s, i.e. tick to receipt <= 1 s).
 *
 * The simulator of 1 and 2 runs in its own process, warmed. Asserts nothing (docs/performance.md).
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { timeFill } from "./events-daemon.js";
import {
  type DeliveryResult,
  type LatencyRound,
  timeDelivery,
  timeLatency,
  timeRunAlone,
} from "./events-delivery.js";
import { createDatabase, pingPostgres, postgresBinDir, startThrowawayPostgres } from "./postgres-server.js";
import { startSimulatorProcess } from "./simulator-process.js";

const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

function whole(flag: string, value: string, min: number): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < min)
    throw new Error(
      `--${flag}: "${value}" is not a whole number from ${min}. Try: --${flag} ${Math.max(min, 1)}`,
    );
  return n;
}

function host(): string {
  const cpus = os.cpus();
  const commit = execFileSync("git", ["rev-parse", "--short", "HEAD"], { encoding: "utf8" }).trim();
  return `${cpus.length} x ${cpus[0]?.model ?? "?"}, Node ${process.version}, commit ${commit}`;
}

const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(" ");

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
};

/**
 * `rounds` pairs of fills, with events and without, alternating which goes first; leaves the last
 * with-events mirror. Prints the best of each, and the median of the pairs' own ratios of wall and
 * CPU time: single runs here move by 10% or more with the host's load, a pair's two runs far less.
 */
async function fillFigure(apiUrl: string, dir: string, rounds: number, details: boolean): Promise<string> {
  const best = { events: Number.POSITIVE_INFINITY, none: Number.POSITIVE_INFINITY };
  const ratios: number[] = [];
  const cpuRatios: number[] = [];
  const cpu = { events: [] as number[], none: [] as number[] };
  const remove = (db: string) => {
    for (const suffix of ["", "-wal", "-shm"]) rmSync(db + suffix, { force: true });
  };
  let kept = "";
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? (["events", "none"] as const) : (["none", "events"] as const);
    const t = { events: { ms: 0, cpuMs: 0 }, none: { ms: 0, cpuMs: 0 } };
    for (const mode of order) {
      const path = join(dir, `fill-${mode}-${round}.db`);
      t[mode] = await timeFill(
        apiUrl,
        path,
        mode === "events",
        join(dir, `fill-${mode}-${round}.log`),
        details,
      );
      best[mode] = Math.min(best[mode], t[mode].ms);
      cpu[mode].push(t[mode].cpuMs);
      if (mode === "events") {
        if (kept) remove(kept);
        kept = path;
      } else remove(path);
    }
    ratios.push(t.events.ms / t.none.ms);
    cpuRatios.push(t.events.cpuMs / t.none.cpuMs);
    const run = (m: "events" | "none") => `${m} ${s(t[m].ms)} (CPU ${s(t[m].cpuMs)})`;
    console.log(
      `  pair ${round + 1}: ${order.map(run).join(", ")}; ${ratios.at(-1)?.toFixed(3)}x, CPU ${cpuRatios.at(-1)?.toFixed(3)}x; load ${load()}`,
    );
  }
  console.log(`  best of ${rounds}: with events ${s(best.events)}, without ${s(best.none)}`);
  console.log(`  median CPU: with events ${s(median(cpu.events))}, without ${s(median(cpu.none))}`);
  console.log(
    `fill with events / without = ${median(ratios).toFixed(3)}x median of ${rounds} pairs,` +
      ` CPU ${median(cpuRatios).toFixed(3)}x; ${(best.events / best.none).toFixed(3)}x best of each (target <= 1.1x)`,
  );
  return kept;
}

function printDelivery(label: string, r: DeliveryResult): void {
  console.log(
    `${label}: ${r.events} events in ${r.messages} messages, first message to last event ${s(r.deliverMs)}` +
      ` (target <= 20 s; ${Math.round(r.events / (r.deliverMs / 1000))} events/s), first message ${s(r.startMs)} after start`,
  );
  console.log(
    `  daemon RSS during delivery: min ${r.rssMin.toFixed(0)} MB, max ${r.rssMax.toFixed(0)} MB` +
      ` (${r.rssSamples} samples; each quarter's max ${r.rssQuarters.map((m) => m.toFixed(0)).join(", ")} MB;` +
      ` memory flat is the target), peak ${r.peakRssMb.toFixed(0)} MB, CPU ${r.cpuS.toFixed(1)} s;` +
      ` ids missing ${r.gaps}, signatures refused ${r.rejected}`,
  );
}

function printLatency(periodS: number, rounds: LatencyRound[]): void {
  for (const r of rounds) {
    console.log(
      `  insert +${s(r.tickAt - r.insertedAt)} tick, feed request +${s(r.feedAt - r.tickAt)} after it,` +
        ` received ${s(r.receivedAt - r.tickAt)} after the tick (${s(r.receivedAt - r.feedAt)} after the request;` +
        ` ${s(r.receivedAt - r.insertedAt)} after the insert)`,
    );
  }
  const worst = Math.max(...rounds.map((r) => r.receivedAt - r.tickAt));
  const worstInsert = Math.max(...rounds.map((r) => r.receivedAt - r.insertedAt));
  console.log(
    `latency, schedule every ${periodS} s: tick to receipt at most ${s(worst)} (target <= 1 s);` +
      ` insert to receipt at most ${s(worstInsert)} (target <= ${periodS + 1} s)`,
  );
}

/** The backlog delivery on a PostgreSQL mirror filled with events by `sync`. */
async function postgresFigure(
  apiUrl: string,
  dir: string,
  bookings: number,
  timeoutMs: number,
): Promise<void> {
  const given = process.env.BOOKING_BENCH_POSTGRES_URL;
  const bin = postgresBinDir();
  if (!given && !bin) return console.log("PostgreSQL: no server and no initdb found; skipped");
  if (given) await pingPostgres(given, "BOOKING_BENCH_POSTGRES_URL");
  const server = given ? { url: given, stop: () => {} } : await startThrowawayPostgres(bin as string, []);
  try {
    const db = await createDatabase(server.url, "booking_events_bench");
    try {
      const fill = await timeFill(apiUrl, db.url, true, join(dir, "fill-pg.log"));
      console.log(`PostgreSQL: fill with events ${s(fill.ms)}`);
      printDelivery(
        "delivery, PostgreSQL backlog",
        await timeDelivery(apiUrl, db.url, bookings, join(dir, "run-pg.log"), timeoutMs),
      );
    } finally {
      await db.drop();
    }
  } finally {
    server.stop();
  }
}

const OPTIONS = {
  bookings: { type: "string", default: "100000" },
  rounds: { type: "string", default: "3" },
  pairs: { type: "string" },
  "period-s": { type: "string", default: "5" },
  "latency-rounds": { type: "string", default: "5" },
  "timeout-s": { type: "string", default: "300" },
  postgres: { type: "boolean" },
  "skip-fill": { type: "boolean" },
  "fill-only": { type: "boolean" },
  details: { type: "boolean" },
} as const;

async function main(): Promise<void> {
  const { values } = parseArgs({ options: OPTIONS });
  const bookings = whole("bookings", values.bookings, 1);
  // --pairs is the fill figure's rounds by the name the interleaved-pairs method gives them.
  const rounds = whole(values.pairs === undefined ? "rounds" : "pairs", values.pairs ?? values.rounds, 1);
  const periodS = whole("period-s", values["period-s"], 1);
  const timeoutMs = whole("timeout-s", values["timeout-s"], 1) * 1000;
  for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => process.exit(1));
  console.log(`events benchmark: ${host()}; load average ${load()}`);
  const dir = mkdtempSync(join(os.tmpdir(), "booking-sync-events-"));
  const sim = await startSimulatorProcess(bookings, 0);
  process.once("exit", () => sim.child.kill("SIGTERM"));
  try {
    console.log(
      `feed of ${bookings} bookings, latency 0 ms, simulator in its own process (${await sim.warm()} cached)`,
    );
    const filled = values["skip-fill"]
      ? undefined
      : await fillFigure(sim.url, dir, rounds, values.details === true);
    if (values["fill-only"]) return console.log(`load average at the end ${load()}`);
    if (filled) {
      const r = await timeDelivery(sim.url, filled, bookings, join(dir, "run-backlog.log"), timeoutMs);
      printDelivery("delivery, backlog (SQLite)", r);
    }
    const live = await timeDelivery(
      sim.url,
      join(dir, "live.db"),
      bookings,
      join(dir, "run-live.log"),
      timeoutMs,
    );
    printDelivery("delivery, live cold fill (SQLite)", live);
    const alone = await timeRunAlone(sim.url, join(dir, "alone.db"), join(dir, "run-alone.log"), timeoutMs);
    console.log(
      `  run's first sync (the cold fill) with the webhook ${s(live.syncMs)}, without ${s(alone)}` +
        ` (${(live.syncMs / alone).toFixed(2)}x); the last event ${s(live.afterSyncMs)} after that sync ended`,
    );
    if (values.postgres) await postgresFigure(sim.url, dir, bookings, timeoutMs);
    const latencyRounds = whole("latency-rounds", values["latency-rounds"], 1);
    const latency = await timeLatency(
      2000,
      periodS,
      latencyRounds,
      join(dir, "latency.db"),
      join(dir, "run-latency.log"),
    );
    printLatency(periodS, latency);
    console.log(`load average at the end ${load()}`);
  } finally {
    sim.child.kill("SIGTERM");
    if (!process.env.BOOKING_BENCH_KEEP) rmSync(dir, { recursive: true, force: true });
    else console.log(`kept ${dir}`);
  }
}

await main();
