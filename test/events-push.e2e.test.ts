/**
 * Push through the real daemon: `booking-sync run` (the build) against the simulator, a real
 * mirror, and a receiver on 127.0.0.1 that verifies every signature. What the app must be able to
 * count on: every event of the mirror arrives, in order, across a SIGKILL and a receiver that was
 * down; a repeated message is the same message. Run `npm run build` first.
 */
import { afterEach, describe, expect, it } from "vitest";
import { http } from "./support/daemon-process.js";
import { runCli } from "./support/harness.js";
import { freshPostgresDatabase, postgresAvailable } from "./support/postgres.js";
import {
  allTaken,
  bookingIds,
  eventRows,
  liveStream,
  nextDaemonResends,
  type PushRig,
  pending,
  pushRig,
  receiverUntil,
  synced,
  terminate,
} from "./support/push-rig.js";
import { untagged } from "./support/webhook-ids.js";
import { type Received, testSecret } from "./support/webhook-receiver.js";

let rig: PushRig | undefined;
let drop: (() => Promise<void>) | undefined;
afterEach(async () => {
  await rig?.close();
  await drop?.();
  rig = drop = undefined;
});

/** Summary columns as a booking.created event carries them (paid as true/false). */
interface SummaryRow {
  id: string;
  booking_type: string;
  created_at: string;
  booking_state: string;
  paid: number;
  total_amount: number;
}

/**
 * The daemon is SIGKILLed in its cold fill while the receiver holds a request open; the next daemon
 * (a standby already waiting for the lease, or one started after) resends that message (same
 * webhook-id, same body) and the app ends with every event once, in order. The fill commits every
 * 20 pages (store/batch.ts): 50 pages give deliveries while it goes on.
 */
async function killMidDelivery(r: PushRig, standby: boolean): Promise<void> {
  const { rx, db, h } = r;
  // The third message is held open: the kill lands while it is in flight.
  rx.answer({}, {}, { delayMs: 60_000 });
  const a = await r.daemon({ EVENTS_WEBHOOK_BATCH: "25" });
  // Events flow: the source now stalls, so the kill also lands in the middle of the cold fill.
  await rx.waitForRequests(1);
  h.sim.behave({ latencyMs: 60_000 });
  // Another batch size: a message built again, not the stored one, would have another id.
  const next = { EVENTS_WEBHOOK_BATCH: "40", SYNC_PAGE_SIZE: "100" };
  const b = standby ? await r.daemon(next) : undefined;
  await b?.d.waitForLog((l) => String(l.msg).includes("standing by"), "the standby");
  await rx.waitForRequests(3);
  a.d.child.kill("SIGKILL");
  expect((await a.d.exited).signal).toBe("SIGKILL");
  expect(a.d.lines.some(synced), "the first daemon's sync ended before the kill").toBe(false);
  const held = rx.requests[2] as Received;
  expect(held.status).toBeUndefined();
  expect((await pending(db)).message_id).toBe(held.id);

  h.sim.behave({ latencyMs: 0 });
  rx.answer();
  const { d } = b ?? (await r.daemon(next));
  await nextDaemonResends(r, held, d);
  if (!b) return;
  // The standby sent nothing before it held the lease.
  const took = d.lines.findIndex((l) => l.msg === "took the writer lease; syncing");
  const started = d.lines.findIndex((l) => l.msg === "webhook delivery started");
  expect(took).toBeGreaterThanOrEqual(0);
  expect(started).toBeGreaterThan(took);
}

describe("events push through the daemon (SQLite)", () => {
  it("a cold fill's events are the bookings mirrored, one booking.created each, delivered in order, signed by both secrets of a rotation", async () => {
    // Two secrets, as during a rotation: every message carries a signature by each.
    rig = await pushRig({ bookings: 240, pageSize: 50, secrets: [testSecret(1), testSecret(2)] });
    const { rx, db } = rig;
    const { d } = await rig.daemon({ EVENTS_WEBHOOK_BATCH: "40" });
    await d.waitForLog(synced, "the start-up sync");
    const events = await eventRows(db);
    const mirrored = await bookingIds(db);
    expect(mirrored).toEqual(rig.h.sourceIds());
    expect(events.map((e) => e.type)).toEqual(mirrored.map(() => "booking.created"));
    expect(events.map((e) => e.booking_id).sort()).toEqual(mirrored);

    expect(await allTaken(rig)).toEqual(events);
    expect(liveStream(rx)).toEqual(events.map((e) => e.id));
    expect(rx.delivered().every((m) => m.events.length <= 40)).toBe(true);
    expect(rx.requests.map((m) => m.verifiedBy)).toEqual(rx.requests.map(() => [0, 1]));
    const rows = await db.rows<SummaryRow>(
      "SELECT id, booking_type, created_at, booking_state, paid, total_amount FROM bookings",
    );
    const byId = new Map(rows.map((b) => [b.id, b]));
    for (const e of rx.delivered().flatMap((m) => m.events)) {
      const b = byId.get(String(e.bookingId));
      // The feed's summaries carry no type: an all-types stream learns it from the details, later.
      expect([null, b?.booking_type]).toContain((e.booking as { bookingType: unknown }).bookingType);
      expect(e.booking, String(e.bookingId)).toMatchObject({
        createdAt: b?.created_at,
        bookingState: b?.booking_state,
        paid: Boolean(b?.paid),
        totalAmount: b?.total_amount,
      });
    }
    expect(await terminate(d)).toBe(0);
  });

  it("SIGKILL mid-delivery loses no event: the message in flight is resent as it was", async () => {
    rig = await pushRig({ bookings: 1000, pageSize: 20, latencyMs: 5 });
    await killMidDelivery(rig, false);
  });

  it("a standby that takes the lease after the SIGKILL resumes the stream where it was", async () => {
    rig = await pushRig({ bookings: 1000, pageSize: 20, latencyMs: 5 });
    await killMidDelivery(rig, true);
  });
});

describe("events replay through the daemon", () => {
  it("`events replay` re-delivers exactly the range asked, as new messages carrying the same events, before newer live ones", async () => {
    rig = await pushRig({ bookings: 120, pageSize: 50 });
    const { rx, db, h } = rig;
    const { d, url } = await rig.daemon({ EVENTS_WEBHOOK_BATCH: "20" });
    await d.waitForLog(synced, "the start-up sync");
    const before = await allTaken(rig);
    const liveIds = new Set(rx.requests.map((r) => r.id));
    const original = new Map(rx.delivered().flatMap((m) => m.events.map((e) => [e.id, e] as const)));

    // The CLI asks, in another process: the daemon sees it by its idle poll. The replay's first
    // message fails once: new live events committed meanwhile must wait for the replay.
    rx.answer({ status: 500 }, {});
    const asked = await runCli(["events", "replay", "--from", "30", "--to", "75"], h.env());
    expect(asked.code, asked.stderr).toBe(0);
    const replay = Number(/^replay (\d+) queued: events 30 to 75;/.exec(asked.stdout)?.[1]);
    expect(replay).toBeGreaterThan(0);
    const replayed = () => rx.delivered().filter((m) => untagged(m.id).endsWith(`_replay${replay}`));
    await receiverUntil(rx, () => rx.requests.some((r) => r.id.includes("_replay")), "the replay's start");
    h.sim.insert(4);
    expect((await http(`${url}/sync`, { method: "POST" })).status).toBe(202);
    await d.waitForLogs(synced, 2, "the triggered sync");
    const events = await allTaken(rig);

    const messages = replayed();
    expect(messages.map((m) => untagged(m.id))).toEqual(
      [30, 50, 70].map((first) => {
        const end = Math.min(first + 19, 75);
        return `msg_${first}_${end}_replay${replay}`;
      }),
    );
    expect(messages.some((m) => liveIds.has(m.id))).toBe(false);
    const sent = messages.flatMap((m) => m.events);
    expect(sent.map((e) => e.id)).toEqual(range(30, 75));
    for (const e of sent) expect(e).toEqual(original.get(e.id));
    expect(liveStream(rx)).toEqual(events.map((e) => e.id));
    const lastReplay = rx.requests.findLastIndex((r) => r.id.includes("_replay"));
    const firstNew = rx.requests.findIndex((r) => r.events.some((e) => e.id > (before.at(-1)?.id ?? 0)));
    expect(lastReplay).toBeLessThan(firstNew);
    const [row] = await db.rows<{ next_id: number; finished_at: string | null }>(
      `SELECT next_id, finished_at FROM event_replays WHERE id = ${replay}`,
    );
    expect(row?.next_id).toBe(76);
    expect(row?.finished_at).not.toBeNull();
    expect(await terminate(d)).toBe(0);
  });
});

describe.skipIf(!postgresAvailable())("events push through the daemon (PostgreSQL)", () => {
  it("SIGKILL mid-delivery loses no event: the message in flight is resent as it was", async () => {
    const fresh = await freshPostgresDatabase();
    drop = fresh.drop;
    rig = await pushRig({ bookings: 1000, pageSize: 20, latencyMs: 5, dbUrl: fresh.url });
    await killMidDelivery(rig, false);
  });
});

function range(from: number, to: number): number[] {
  return Array.from({ length: to - from + 1 }, (_, i) => from + i);
}
