/**
 * What a backlog costs the store, on a real mirror of each database: on PostgreSQL every store call
 * is a round trip or more, and a backlog of 100,000 events is 1,000 messages. A message in a streak
 * costs two calls: read its events, and one write that records the message before it as delivered
 * and stores it as pending; the state, and whether a replay waits, come back with the write.
 */
import { expect, it } from "vitest";
import type { EventStore } from "../src/events/ports.js";
import { afterTest, deliveryLoop, receiver } from "./support/delivery-harness.js";
import { eventMirror } from "./support/event-mirror.js";
import { type Backend, describeBackends } from "./support/postgres.js";
import { untagged } from "./support/webhook-ids.js";

type Calls = Record<string, number>;

/** `store` counting the calls made to each of its methods into `calls`. */
function counted(store: EventStore, calls: Calls): EventStore {
  return new Proxy(store, {
    get(target, key: keyof EventStore) {
      const method = target[key];
      if (typeof method !== "function") return method;
      return (...args: unknown[]) => {
        calls[key] = (calls[key] ?? 0) + 1;
        return (method as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}

/** Delivers a backlog of `messages` messages of 10 events on a fresh mirror; the calls it took. */
async function backlog(backend: Backend, messages: number): Promise<Calls> {
  const m = await eventMirror(backend);
  afterTest(() => m.close());
  await m.append(messages * 10);
  const rx = await receiver();
  const calls: Calls = {};
  const loop = deliveryLoop(counted(m.events, calls), rx.url, { batch: 10 });
  await loop.settled("idle");
  await loop.stop();
  expect(rx.delivered().map((r) => untagged(r.id))).toEqual(
    Array.from({ length: messages }, (_, i) => `msg_${i * 10 + 1}_${i * 10 + 10}`),
  );
  expect(rx.requests).toHaveLength(messages);
  expect(await m.events.readDelivery()).toMatchObject({ cursor: messages * 10, pending: null });
  return calls;
}

describeBackends("the store calls of a backlog", (backend) => {
  it("costs two store calls a message: its events read, one write", async () => {
    const few = await backlog(backend, 2);
    const more = await backlog(backend, 6);
    const extra = Object.fromEntries(Object.keys(more).map((k) => [k, (more[k] ?? 0) - (few[k] ?? 0)]));
    // Four messages more: the state is never read again in a streak, nor the pending message's
    // events, nor the replays while no write says one waits; one write a message both moves the
    // cursor and stores the next message.
    expect(extra).toEqual({ readDelivery: 0, nextReplay: 0, readEvents: 4, saveDelivery: 4 });
  });

  it("still sends a replay asked for during a backlog before the rest of it, a message later at most", async () => {
    const m = await eventMirror(backend);
    afterTest(() => m.close());
    await m.append(60);
    const rx = await receiver();
    // The receiver holds its answer to the second message until the replay is committed: the replay
    // is asked while that message is in flight however slow the host, and the test waits on no timer.
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    rx.answer({}, { until: held }, {});
    const loop = deliveryLoop(m.events, rx.url, { batch: 10 });
    await rx.waitForRequests(2);
    const replay = await m.events.requestReplay(1, 5, loop.clock.now().toISOString());
    release();
    await loop.settled("idle");
    const sent = rx.delivered().map((r) => untagged(r.id));
    const at = sent.indexOf(`msg_1_5_replay${replay}`);
    // Asked while the second was in flight: the write storing the third had not seen it yet.
    expect(at).toBeGreaterThanOrEqual(2);
    expect(at).toBeLessThanOrEqual(3);
    expect(sent.filter((id) => !id.includes("replay"))).toEqual(
      Array.from({ length: 6 }, (_, i) => `msg_${i * 10 + 1}_${i * 10 + 10}`),
    );
    expect(await m.events.nextReplay()).toBeNull();
  });
});
