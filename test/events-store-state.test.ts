/**
 * The webhook sink's state, replays and retention on both databases, through `mirror.events` and
 * checked through SQL on another connection: what the delivery loop relies on surviving a restart.
 */
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import type { DeliveryState } from "../src/events/ports.js";
import { eventStore } from "../src/store/event-store.js";
import { SQLITE } from "../src/store/mirror/dialect.js";
import { openStore } from "../src/store/open.js";
import { type Snapshot, sqliteSnapshot } from "../src/store/snapshot.js";
import { type EventMirror, eventMirror } from "./support/event-mirror.js";
import { INITIAL_DELIVERY } from "./support/memory-event-store.js";
import { describeBackends } from "./support/postgres.js";
import { feedBatch, okSummary, summaryRaw, tempDir } from "./support/store-fixtures.js";

const JAN = "2026-01-01T00:00:00.000Z";
const FEB = "2026-02-01T00:00:00.000Z";
const MID_FEB = "2026-02-15T00:00:00.000Z";
const MAR = "2026-03-01T00:00:00.000Z";
const NOW = "2026-03-02T00:00:00.000Z";
const LATER = "2026-03-03T00:00:00.000Z";
const NOTHING_OLDER = "2000-01-01T00:00:00.000Z";
const EVERYTHING_OLDER = "2100-01-01T00:00:00.000Z";

describeBackends("events store: delivery state, replays, retention", (backend) => {
  const open: EventMirror[] = [];
  afterEach(async () => {
    for (const m of open.splice(0)) await m.close();
  });
  const fresh = async () => {
    const m = await eventMirror(backend);
    open.push(m);
    return m;
  };
  const remaining = async (m: EventMirror) => (await m.events.readEvents(0, 1_000)).map((e) => e.id);

  it("keeps the sink's state as written, a part at a time, the pending message set and cleared", async () => {
    const { events, query } = await fresh();
    expect(await events.readDelivery()).toEqual(INITIAL_DELIVERY);
    const pending = { id: "msg_1_5_0a1b2c3d", first: 1, last: 5, replay: null };
    const failing: Partial<DeliveryState> = {
      endpoint: "ab".repeat(32),
      pending,
      attempts: 2,
      nextAttemptAt: NOW,
      lastError: "the webhook answered HTTP 500",
      lastErrorAt: MAR,
    };
    await events.saveDelivery(failing);
    let state: DeliveryState = { ...INITIAL_DELIVERY, ...failing };
    expect(await events.readDelivery()).toEqual(state);
    await events.saveDelivery({ attempts: 3 });
    state = { ...state, attempts: 3 };
    expect(await events.readDelivery()).toEqual(state);
    await events.saveDelivery({ pending: { ...pending, id: "msg_2_4_replay7_0a1b2c3d", replay: 7 } });
    expect((await events.readDelivery()).pending).toEqual({
      id: "msg_2_4_replay7_0a1b2c3d",
      first: 1,
      last: 5,
      replay: 7,
    });
    await events.saveDelivery({
      pending: null,
      cursor: 5,
      attempts: 0,
      nextAttemptAt: null,
      lastDeliveredAt: LATER,
    });
    state = { ...state, pending: null, cursor: 5, attempts: 0, nextAttemptAt: null, lastDeliveredAt: LATER };
    expect(await events.readDelivery()).toEqual(state);
    // The cursor never moves back: retention and the delivery loop both move it.
    await events.saveDelivery({ cursor: 3 });
    expect((await events.readDelivery()).cursor).toBe(5);
    expect(
      await query(
        "SELECT name, cursor, message_id, message_first, message_last, message_replay FROM event_delivery",
      ),
    ).toEqual([
      {
        name: "webhook",
        cursor: 5,
        message_id: null,
        message_first: null,
        message_last: null,
        message_replay: null,
      },
    ]);
  });

  it("keeps replays in request order, advancing each until past its end", async () => {
    const { events, query } = await fresh();
    expect(await events.nextReplay()).toBeNull();
    const first = await events.requestReplay(2, 4, NOW);
    const second = await events.requestReplay(10, 12, NOW);
    expect(second).toBeGreaterThan(first);
    expect(await events.nextReplay()).toEqual({ id: first, from: 2, to: 4, next: 2 });
    await events.advanceReplay(first, 4, LATER, { attempts: 0, pending: null });
    expect(await events.nextReplay()).toEqual({ id: first, from: 2, to: 4, next: 4 });
    await events.advanceReplay(first, 5, LATER, { lastDeliveredAt: LATER });
    expect(await events.readDelivery()).toMatchObject({ lastDeliveredAt: LATER, cursor: 0 });
    expect(await events.nextReplay()).toEqual({ id: second, from: 10, to: 12, next: 10 });
    await events.advanceReplay(second, 13, LATER, {});
    expect(await events.nextReplay()).toBeNull();
    expect(
      await query("SELECT from_id, to_id, next_id, requested_at, finished_at FROM event_replays ORDER BY id"),
    ).toEqual([
      { from_id: 2, to_id: 4, next_id: 5, requested_at: NOW, finished_at: LATER },
      { from_id: 10, to_id: 12, next_id: 13, requested_at: NOW, finished_at: LATER },
    ]);
  });

  it("retention deletes only what is delivered and old, or all that is old with no sink", async () => {
    const m = await fresh();
    const old = [...(await m.append(3, JAN)), ...(await m.append(3, FEB))];
    const recent = await m.append(2, MAR);
    await m.events.saveDelivery({ cursor: old[3] as number });
    // Delivered and older: the January ones and the first of February; not the undelivered.
    expect(await m.events.pruneEvents(MID_FEB, 1_000, true, NOW)).toEqual({ pruned: 4, dropped: 0 });
    expect(await remaining(m)).toEqual([...old.slice(4), ...recent]);
    expect(await m.events.pruneEvents(MID_FEB, 1_000, true, NOW)).toEqual({ pruned: 0, dropped: 0 });
    // No sink: whatever is older goes.
    expect(await m.events.pruneEvents(MID_FEB, 1_000, false, NOW)).toEqual({ pruned: 2, dropped: 0 });
    expect(await remaining(m)).toEqual(recent);
    expect(await m.events.readDelivery()).toMatchObject({ cursor: old[3], dropped: 0, droppedAt: null });
  });

  it("past the cap drops the oldest undelivered, moving the cursor and counting them; ids are never reused", async () => {
    const m = await fresh();
    const ids = await m.append(8, MAR);
    await m.events.saveDelivery({ cursor: ids[1] as number });
    // Six undelivered, two allowed: the four oldest go.
    expect(await m.events.pruneEvents(NOTHING_OLDER, 2, true, NOW)).toEqual({ pruned: 0, dropped: 4 });
    expect(await m.events.readDelivery()).toMatchObject({ cursor: ids[5], dropped: 4, droppedAt: NOW });
    expect((await m.events.readEvents(ids[5] as number, 100)).map((e) => e.id)).toEqual(ids.slice(6));
    expect(await m.events.pruneEvents(NOTHING_OLDER, 2, true, NOW)).toEqual({ pruned: 0, dropped: 0 });
    const more = await m.append(1, MAR);
    expect(await m.events.pruneEvents(NOTHING_OLDER, 2, true, LATER)).toEqual({ pruned: 0, dropped: 1 });
    expect(await m.events.readDelivery()).toMatchObject({ cursor: ids[6], dropped: 5, droppedAt: LATER });

    // Everything pruned, the newest included: the next event still gets a new id.
    await m.events.pruneEvents(EVERYTHING_OLDER, 1_000, false, LATER);
    expect(await remaining(m)).toEqual([]);
    expect(await m.events.lastEventId()).toBe(0);
    const [next] = await m.append(1, LATER);
    expect(next).toBeGreaterThan(more[0] as number);
    // A consumer may ask after any whole number, past what a 32-bit id holds too.
    expect(await m.events.readEvents(2 ** 40, 10)).toEqual([]);
    expect((await m.events.readEvents(0, 10, 2 ** 40)).map((e) => e.id)).toEqual([next]);
  });
});

describe("events store: retention's cap beside the delivery loop (SQLite)", () => {
  it("drops nothing and counts nothing when the loop delivered them while the cap was being judged", async () => {
    const dir = tempDir();
    try {
      const file = dir.file();
      const store = openStore(file, { batch: { pages: 1, ms: 1000 } });
      const records = Array.from({ length: 30 }, (_, i) => okSummary(summaryRaw(i + 1)));
      store.save(feedBatch(records, JAN));
      store.flush();
      const reader = new Database(file, { readonly: true });
      const snapshot = sqliteSnapshot(reader, file);
      let reads = 0;
      // The delivery loop takes everything right after the cap read the cursor.
      const racing: Snapshot = (read) =>
        snapshot(read).then((rows) => {
          if (++reads === 1) store.events.saveDelivery({ cursor: 30 });
          return rows;
        });
      const events = eventStore(
        racing,
        (sql, params) => store.db.prepare(sql).all(...params) as never,
        SQLITE,
      );
      expect(await events.pruneEvents(NOTHING_OLDER, 10, true, NOW)).toEqual({ pruned: 0, dropped: 0 });
      const state = await store.events.readDelivery();
      expect([state.cursor, state.dropped, state.droppedAt]).toEqual([30, 0, null]);
      expect((await store.events.readEvents(0, 100)).length).toBe(30);
      reader.close();
      store.close();
    } finally {
      dir.cleanup();
    }
  });
});
