/**
 * Push end to end: the built daemon (`booking-sync run`) as a subprocess against the bundled
 * simulator, a mirror in SQLite (or PostgreSQL), and a receiver on 127.0.0.1 that verifies every
 * signature (webhook-receiver.ts). Waits are on the receiver's arrivals and the daemon's log lines.
 */
import pg from "pg";
import { expect } from "vitest";
import { type DaemonProcess, freePort, type LogLine, spawnDaemon } from "./daemon-process.js";
import { analyst, type Harness, type HarnessOptions, harness } from "./harness.js";
import { type Received, startWebhookReceiver, testSecret, type WebhookReceiver } from "./webhook-receiver.js";

/** A schedule that never fires during a test: runs happen at start-up and on POST /sync only. */
export const NEVER = "0 0 1 1 *";

/** A run that ended well ("sync finished", or the same with a warning's note). */
export const synced = (l: LogLine) => String(l.msg).startsWith("sync finished") && l.status === "success";

/** An event row of `booking_events`. */
export interface EventRow {
  id: number;
  type: string;
  booking_id: string;
  run_id: number | null;
}

export interface PushRig {
  h: Harness;
  rx: WebhookReceiver;
  /** The mirror the daemons write: the harness's SQLite file, or `BOOKING_DB_URL`'s database. */
  db: MirrorReader;
  /** Starts a daemon delivering to `rx` on a free port (schedule NEVER unless given). */
  daemon(env?: Record<string, string>): Promise<{ d: DaemonProcess; url: string }>;
  close(): Promise<void>;
}

/** Reads the mirror as an analyst would, from either database; SQL common to both. */
export interface MirrorReader {
  rows<T>(sql: string): Promise<T[]>;
  close(): Promise<void>;
}

/** `dbUrl`: a PostgreSQL mirror instead of the SQLite file; `secrets`: the daemon's and receiver's. */
export async function pushRig(
  options: HarnessOptions & { dbUrl?: string; secrets?: string[] } = {},
): Promise<PushRig> {
  const h = await harness(options);
  const secrets = options.secrets ?? [testSecret(1)];
  const rx = await startWebhookReceiver({ secrets });
  const db = options.dbUrl ? await postgresReader(options.dbUrl) : sqliteReader(h.dbPath);
  const daemons: DaemonProcess[] = [];
  return {
    h,
    rx,
    db,
    async daemon(env = {}) {
      const port = await freePort();
      const d = spawnDaemon(
        h.env({
          HTTP_PORT: String(port),
          SYNC_SCHEDULE: NEVER,
          EVENTS_WEBHOOK_URL: rx.url,
          EVENTS_WEBHOOK_SECRET: secrets.join(" "),
          ...(options.dbUrl ? { BOOKING_DB_URL: options.dbUrl } : {}),
          ...env,
        }),
      );
      daemons.push(d);
      return { d, url: `http://127.0.0.1:${port}` };
    },
    async close() {
      for (const d of daemons.splice(0)) {
        if (d.child.exitCode === null && d.child.signalCode === null) d.child.kill("SIGKILL");
        await d.exited;
      }
      await rx.close();
      await db.close();
      await h.close();
    },
  };
}

function sqliteReader(dbPath: string): MirrorReader {
  return {
    async rows<T>(sql: string) {
      const db = analyst(dbPath);
      try {
        return db.prepare(sql).all() as T[];
      } finally {
        db.close();
      }
    },
    async close() {},
  };
}

async function postgresReader(url: string): Promise<MirrorReader> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  return {
    rows: async <T>(sql: string) => (await client.query(sql)).rows as T[],
    close: () => client.end(),
  };
}

/** The mirror's events, in id order. */
export function eventRows(db: MirrorReader): Promise<EventRow[]> {
  return db.rows<EventRow>(
    "SELECT CAST(id AS integer) AS id, type, booking_id, CAST(run_id AS integer) AS run_id FROM booking_events ORDER BY id",
  );
}

/** The mirror's booking ids, sorted. */
export async function bookingIds(db: MirrorReader): Promise<string[]> {
  return (await db.rows<{ id: string }>("SELECT id FROM bookings ORDER BY id")).map((r) => r.id);
}

/**
 * Resolves once `done` holds, looking again at each request the receiver gets (an answer given at
 * once is recorded before the next look). Rejects after `ms` naming `what`: a deadline, not a sleep.
 */
export async function receiverUntil(
  rx: WebhookReceiver,
  done: () => boolean,
  what: string,
  ms = 40_000,
): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const seen = rx.requests.map((r) => `${r.id}:${r.status ?? "open"}`).join(" ");
      reject(new Error(`no ${what} after ${ms} ms; the receiver saw: ${seen}`));
    }, ms);
  });
  try {
    while (!done()) await Promise.race([rx.waitForRequests(arrived(rx) + 1), deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/** Requests the receiver has had, verified or not. */
function arrived(rx: WebhookReceiver): number {
  return rx.requests.length + rx.rejected.length;
}

/** Whether the receiver took (2xx) a message whose last event is `id` or later. */
export function tookUpTo(rx: WebhookReceiver, id: number): boolean {
  return rx.delivered().some((m) => !m.id.includes("_replay") && (m.events.at(-1)?.id ?? 0) >= id);
}

/** Waits until the receiver took the mirror's last event (live); returns the mirror's events. */
export async function allTaken(r: Pick<PushRig, "rx" | "db">): Promise<EventRow[]> {
  const events = await eventRows(r.db);
  const last = events.at(-1)?.id ?? 0;
  await receiverUntil(r.rx, () => tookUpTo(r.rx, last), `event ${last} taken`);
  return events;
}

/**
 * What the app sees once it drops repeated webhook-ids: the live messages taken, first copy of each.
 * Also checks what the stream promises of every request: each verified, and a webhook-id seen more
 * than once always carried the same body. Returns the event ids in the order taken.
 */
export function liveStream(rx: WebhookReceiver): number[] {
  if (rx.rejected.length > 0) throw new Error(`unverified requests: ${JSON.stringify(rx.rejected)}`);
  const bodies = new Map<string, string>();
  for (const r of rx.requests) {
    const before = bodies.get(r.id);
    if (before !== undefined && before !== r.body) throw new Error(`${r.id} was sent with two bodies`);
    bodies.set(r.id, r.body);
  }
  const taken = new Map<string, Received>();
  for (const m of rx.delivered()) if (!m.id.includes("_replay") && !taken.has(m.id)) taken.set(m.id, m);
  return [...taken.values()].flatMap((m) => m.events.map((e) => e.id));
}

/** Ends `d` with SIGTERM and waits for its exit code. */
export async function terminate(d: DaemonProcess): Promise<number | null> {
  d.child.kill("SIGTERM");
  return (await d.exited).code;
}

/** The webhook sink's stored message and failed attempts (`event_delivery`). */
export async function pending(db: MirrorReader): Promise<{ message_id: string | null; attempts: number }> {
  const [row] = await db.rows<{ message_id: string | null; attempts: number }>(
    "SELECT message_id, CAST(attempts AS integer) AS attempts FROM event_delivery WHERE name = 'webhook'",
  );
  return row ?? { message_id: null, attempts: 0 };
}

/**
 * The daemon `d`, started after the one that left `held` in flight (the receiver now answering 2xx),
 * must send that message first, as it was, and the app must end with every event once, in order.
 */
export async function nextDaemonResends(r: PushRig, held: Received, d: DaemonProcess): Promise<void> {
  const { rx, db } = r;
  await d.waitForLog(synced, "the next daemon's sync");
  const events = await allTaken(r);
  // liveStream also checks that every copy of a webhook-id carried the same body.
  expect(rx.requests[rx.requests.indexOf(held) + 1]?.id).toBe(held.id);
  expect(liveStream(rx)).toEqual(events.map((e) => e.id));
  expect(events.map((e) => e.booking_id).sort()).toEqual(await bookingIds(db));
  expect(await terminate(d)).toBe(0);
}
