/**
 * A receiver that is down, failing or slow, against the real daemon (the build, as a subprocess):
 * syncs go on as if it were well, and it gets everything once it is. Run `npm run build` first.
 */
import fs from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { http, type LogLine } from "./support/daemon-process.js";
import {
  allTaken,
  bookingIds,
  eventRows,
  liveStream,
  nextDaemonResends,
  type PushRig,
  pending,
  pushRig,
  synced,
  terminate,
} from "./support/push-rig.js";
import { type Received, testSecret } from "./support/webhook-receiver.js";

let rig: PushRig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

const PATH_KEY = "rx-path-key-5c1e9";
const readIfThere = (file: string) => (fs.existsSync(file) ? fs.readFileSync(file).toString("latin1") : "");

const deliveryFailed = (l: LogLine) => String(l.msg).startsWith("webhook delivery failed");

interface RunRow {
  id: number;
  status: string;
}

describe("events push to a receiver that is not well", () => {
  it("a receiver down for many ticks gets everything afterwards, in order; the syncs meanwhile succeed", async () => {
    rig = await pushRig({ bookings: 100, pageSize: 50 });
    const { rx, db, h } = rig;
    await rx.down();
    const { d } = await rig.daemon({ SYNC_SCHEDULE: "* * * * * *", EVENTS_WEBHOOK_BATCH: "30" });
    // New bookings at every tick while nothing can be delivered; the last sync starts after the last
    // insert (runs never overlap), so every one is mirrored.
    const syncs = () => d.lines.filter(synced).length;
    await d.waitForLog(synced, "the start-up sync");
    for (let n = 0; n < 4; n++) {
      h.sim.insert(3);
      await d.waitForLogs(synced, syncs() + 1, "the next tick's sync");
    }
    await d.waitForLogs(synced, syncs() + 1, "one more tick's sync");
    await d.waitForLogs(deliveryFailed, 2, "failed deliveries");
    expect(rx.requests).toHaveLength(0);
    const runs = await db.rows<{ id: number; status: string }>(
      "SELECT id, status FROM sync_runs ORDER BY id",
    );
    expect(runs.length).toBeGreaterThanOrEqual(6);
    expect(runs.filter((run) => run.status !== "success" && run.status !== "running")).toEqual([]);
    // The ticks' new bookings were written with their events while the receiver was down.
    const events = await eventRows(db);
    expect(events.filter((e) => e.run_id !== runs[0]?.id)).toHaveLength(12);

    await rx.up();
    expect(await allTaken(rig)).toEqual(events);
    expect(liveStream(rx)).toEqual(events.map((e) => e.id));
    expect(events.map((e) => e.booking_id).sort()).toEqual(await bookingIds(db));
    expect(await terminate(d)).toBe(0);
  });

  it("a receiver answering 500s, then holding a request open, never delays a sync", async () => {
    rig = await pushRig({ bookings: 150, pageSize: 50 });
    const { rx, db, h } = rig;
    // Two failures (backoff), then a request held open well past the syncs below.
    rx.answer({ status: 500 }, { status: 500 }, { delayMs: 60_000 }, {});
    // A URL may carry the receiver's own token: only its origin may ever show.
    const { d, url } = await rig.daemon({
      EVENTS_WEBHOOK_BATCH: "1000",
      EVENTS_WEBHOOK_URL: `${rx.url}?key=${PATH_KEY}`,
    });
    await d.waitForLog(synced, "the start-up sync");
    await rx.waitForRequests(2);
    await d.waitForLog(deliveryFailed, "a failed delivery");

    // A sync while delivery is failing.
    h.sim.insert(5);
    expect((await http(`${url}/sync`, { method: "POST" })).status).toBe(202);
    await d.waitForLogs(synced, 2, "a sync while deliveries fail");

    // A sync that starts and ends while the receiver holds a request open.
    await rx.waitForRequests(3);
    const held = rx.requests[2] as Received;
    h.sim.insert(5);
    expect((await http(`${url}/sync`, { method: "POST" })).status).toBe(202);
    await d.waitForLogs(synced, 3, "a sync while a request is held");
    // Still held: not answered, not given up by the daemon (its timeout would log a third failure).
    expect(held.status).toBeUndefined();
    expect(d.lines.filter(deliveryFailed)).toHaveLength(2);
    expect(rx.requests).toHaveLength(3);

    const runs = await db.rows<RunRow>("SELECT id, status FROM sync_runs ORDER BY id");
    expect(runs.map((r) => r.status)).toEqual(["success", "success", "success"]);
    const events = await eventRows(db);
    const third = events.filter((e) => e.run_id === runs[2]?.id);
    expect(third.map((e) => e.type)).toEqual(Array(5).fill("booking.created"));

    // Stopping does not wait for the receiver either: the attempt is cut off, the message kept.
    expect(await terminate(d)).toBe(0);
    expect(await pending(db)).toEqual({ message_id: held.id, attempts: 2 });
    // Neither the secret nor the URL's path and query in the log, the status or the database.
    const stored = fs.readFileSync(h.dbPath).toString("latin1") + readIfThere(`${h.dbPath}-wal`);
    for (const text of [d.stderr(), stored, JSON.stringify(await db.rows("SELECT * FROM event_delivery"))]) {
      expect(text).not.toContain(PATH_KEY);
      expect(text).not.toContain("/hooks/bookings");
      expect(text).not.toContain(testSecret(1));
    }
    rx.answer();
    // Another batch size, larger (a smaller one rebuilds the held 150 events as new messages on
    // purpose): a message built again, not the stored one, would have another id.
    await nextDaemonResends(rig, held, (await rig.daemon({ EVENTS_WEBHOOK_BATCH: "200" })).d);
  });
});
