/**
 * The push figures of the events benchmark (bench/events-bench.ts): how fast `booking-sync run`
 * delivers a mirror's events to a local verifying receiver, with its RSS sampled meanwhile; and how
 * long a booking new in the feed takes to reach the receiver on a short schedule.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { startSimulator } from "../dist/simulator/index.js";
import { stop, usageOf } from "./cold-start.js";
import { firstSync, type Mirror, rssMb, SECRET, startRun, waitFor } from "./events-daemon.js";
import { startEventsReceiver } from "./events-receiver.js";

/** How often the daemon's RSS is read during delivery, ms. */
const RSS_EVERY_MS = 100;

export interface DeliveryResult {
  /** Daemon start to the first message, and first message to the last event, ms. */
  startMs: number;
  deliverMs: number;
  messages: number;
  events: number;
  gaps: number;
  rejected: number;
  /** RSS samples between the first message and the last event, MB; and the daemon's peak (VmHWM). */
  rssMin: number;
  rssMax: number;
  rssSamples: number;
  /** The highest sample of each quarter of the delivery, MB: flat when the last is no higher than the first. */
  rssQuarters: number[];
  peakRssMb: number;
  cpuS: number;
  /** The daemon's first sync (its own figure, from its log), and its end to the last event, ms. */
  syncMs: number;
  afterSyncMs: number;
}

/**
 * Starts `run` on `mirror` with a webhook to a fresh receiver and waits until it has taken event
 * `expected` (the id of the last event the mirror will hold); then stops the daemon with SIGTERM.
 */
export async function timeDelivery(
  apiUrl: string,
  mirror: Mirror,
  expected: number,
  logPath: string,
  timeoutMs: number,
): Promise<DeliveryResult> {
  const rx = await startEventsReceiver(SECRET);
  const started = performance.now();
  const daemon = startRun(apiUrl, mirror, rx.url, logPath);
  const samples: number[] = [];
  let lastSample = 0;
  const sample = () => {
    const now = performance.now();
    if (rx.firstAt === undefined || now - lastSample < RSS_EVERY_MS) return;
    lastSample = now;
    samples.push(rssMb(daemon.pid as number));
  };
  try {
    const done = () => rx.highest >= expected && firstSync(logPath) !== undefined;
    await waitFor(daemon, logPath, done, timeoutMs, `event ${expected}`, sample, 20);
    const usage = usageOf(daemon.pid as number);
    const first = rx.firstAt as number;
    const sync = firstSync(logPath) as { endAt: number; ms: number };
    return {
      syncMs: sync.ms,
      afterSyncMs: performance.timeOrigin + (rx.lastAt as number) - sync.endAt,
      startMs: first - started,
      deliverMs: (rx.lastAt as number) - first,
      messages: rx.messages,
      events: rx.events,
      gaps: rx.gaps,
      rejected: rx.rejected,
      rssMin: Math.min(...samples),
      rssMax: Math.max(...samples),
      rssSamples: samples.length,
      rssQuarters: [0, 1, 2, 3].map((q) =>
        Math.max(
          ...samples.slice(Math.floor((q * samples.length) / 4), Math.floor(((q + 1) * samples.length) / 4)),
        ),
      ),
      peakRssMb: usage.peakRssMb,
      cpuS: usage.cpuS,
    };
  } finally {
    await stop(daemon);
    await rx.close();
  }
}

export interface LatencyRound {
  /** Epoch ms: the insert, the cron tick after it, the first feed request after it, the receipt. */
  insertedAt: number;
  tickAt: number;
  feedAt: number;
  receivedAt: number;
}

/**
 * `run` with SYNC_SCHEDULE every `periodS` seconds against an in-process simulator of `bookings`;
 * once its first events are delivered, inserts one booking per round, each at another point of the
 * period, and times it to the receiver.
 */
export async function timeLatency(
  bookings: number,
  periodS: number,
  rounds: number,
  mirror: Mirror,
  logPath: string,
): Promise<LatencyRound[]> {
  const sim = await startSimulator({ bookings, latencyMs: 0 });
  const rx = await startEventsReceiver(SECRET);
  const daemon = startRun(sim.url, mirror, rx.url, logPath, { SYNC_SCHEDULE: `*/${periodS} * * * * *` });
  const period = periodS * 1000;
  const out: LatencyRound[] = [];
  try {
    await waitFor(daemon, logPath, () => rx.highest >= bookings, 120_000, "the first fill's events");
    for (let round = 0; round < rounds; round++) {
      // The insert lands at a different point of the period each round: (round + 0.5) / rounds of it.
      const now = Date.now();
      const at = Math.ceil(now / period) * period + Math.floor(((round + 0.5) / rounds) * period);
      await sleep(at - now);
      const [index] = sim.insert(1);
      const insertedAt = Date.now();
      const bookingId = sim.dataset.full(index as number)._id;
      const feed = sim.nextRequest((e) => e.endpoint === "feed").then(() => Date.now());
      let receivedAt: number | undefined;
      rx.onEvents = (events) => {
        if (events.some((e) => e.bookingId === bookingId && e.type === "booking.created"))
          receivedAt = Date.now();
      };
      await waitFor(
        daemon,
        logPath,
        () => receivedAt !== undefined,
        4 * period + 30_000,
        `booking ${bookingId}`,
      );
      out.push({
        insertedAt,
        tickAt: Math.ceil(insertedAt / period) * period,
        feedAt: await feed,
        receivedAt: receivedAt as number,
      });
    }
    return out;
  } finally {
    rx.onEvents = undefined;
    await stop(daemon);
    await rx.close();
    await sim.close();
  }
}

/** `run` on `mirror` without a webhook: its first sync's ms, from its log; then SIGTERM. */
export async function timeRunAlone(
  apiUrl: string,
  mirror: Mirror,
  logPath: string,
  timeoutMs: number,
): Promise<number> {
  const daemon = startRun(apiUrl, mirror, undefined, logPath);
  try {
    await waitFor(
      daemon,
      logPath,
      () => firstSync(logPath) !== undefined,
      timeoutMs,
      "its first sync",
      () => {},
      200,
    );
    return (firstSync(logPath) as { ms: number }).ms;
  } finally {
    await stop(daemon);
  }
}
