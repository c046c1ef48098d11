/**
 * The webhook delivery loop against a real receiver that verifies every signature: order, one
 * message per webhook-id, retries that resend exactly the stored message, a receiver down for a
 * while, Retry-After, replays. The core cases run on a real mirror of each database, its events
 * made by committed pages; the clock is a test clock: no test sleeps.
 */
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { messageBody } from "../src/events/message.js";
import type { EventStore } from "../src/events/ports.js";
import { afterTest, deliveryLoop, receiver } from "./support/delivery-harness.js";
import { eventMirror } from "./support/event-mirror.js";
import { memoryEventStore } from "./support/memory-event-store.js";
import { type Backend, describeBackends } from "./support/postgres.js";
import { untagged } from "./support/webhook-ids.js";

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
const counts = (ids: string[]) => new Map(ids.map((id) => [id, ids.filter((x) => x === id).length]));

/** A real mirror on `backend`, closed after the test (after its loop has stopped). */
async function realStore(backend: Backend) {
  const m = await eventMirror(backend);
  afterTest(() => m.close());
  return {
    store: m.events,
    append: (count: number) => m.append(count),
    /** The replays as stored, in request order. */
    replays: () =>
      m.query<{ next: number; finishedAt: string | null }>(
        'SELECT next_id AS next, finished_at AS "finishedAt" FROM event_replays ORDER BY id',
      ),
  };
}

describeBackends("webhook delivery", (backend) => {
  it("sends every event in id order, each message once, and then what wakes or the idle poll finds", async () => {
    const { store, append } = await realStore(backend);
    await append(250);
    const rx = await receiver();
    const loop = deliveryLoop(store, rx.url);

    await loop.settled("idle");
    expect(rx.delivered().map((m) => untagged(m.id))).toEqual(["msg_1_100", "msg_101_200", "msg_201_250"]);
    expect(rx.delivered()[0]?.body).toBe(messageBody(await store.readEvents(0, 100)));
    const state = await store.readDelivery();
    expect(state).toMatchObject({ cursor: 250, pending: null, attempts: 0, lastError: null });
    expect(state.endpoint).toBe(createHash("sha256").update(rx.url).digest("hex"));

    await append(3);
    loop.delivery.wake();
    expect(await loop.settled("idle")).toEqual({ ms: 1000, why: "idle" });
    await append(2);
    loop.clock.advance(1000); // no wake: the idle poll finds them
    await loop.settled("idle");

    expect(
      rx
        .delivered()
        .map((m) => untagged(m.id))
        .slice(3),
    ).toEqual(["msg_251_253", "msg_254_255"]);
    expect(rx.eventIds()).toEqual(range(1, 255));
    expect([...counts(rx.requests.map((r) => r.id)).values()].every((n) => n === 1)).toBe(true);
    expect(rx.rejected).toEqual([]);
  });

  it("stores the message before its first attempt; a retry, also after a kill, resends its id and body", async () => {
    const { store, append } = await realStore(backend);
    await append(5);
    const rx = await receiver();
    rx.answer({ delayMs: 60_000 }); // answers long after the loop is killed
    const first = deliveryLoop(store, rx.url);
    await rx.waitForRequests(1);
    const id = rx.requests[0]?.id as string;
    expect(untagged(id)).toBe("msg_1_5");
    expect((await store.readDelivery()).pending).toEqual({ id, first: 1, last: 5, replay: null });
    await first.stop();
    // A stop is not the receiver's fault: no failed attempt is counted.
    expect(await store.readDelivery()).toMatchObject({ attempts: 0, lastError: null, cursor: 0 });

    await append(2); // not added to the message already fixed
    rx.answer({ status: 500, body: "database is down" }, {});
    const second = deliveryLoop(store, rx.url);
    const backoff = await second.settled("backoff");
    expect(backoff.ms).toBeGreaterThanOrEqual(500);
    expect(backoff.ms).toBeLessThanOrEqual(1000);
    const failed = await store.readDelivery();
    expect(failed).toMatchObject({ attempts: 1, cursor: 0, pending: { id } });
    expect(failed.lastError).toBe(
      `the webhook at ${rx.origin} answered HTTP 500 Internal Server Error: database is down`,
    );
    expect(failed.nextAttemptAt).toBe(new Date(second.clock.now().getTime() + backoff.ms).toISOString());

    second.clock.advance(backoff.ms);
    await second.settled("idle");
    // The same id, tag and all, each time: the stored id, not a new one per attempt or per start.
    expect(rx.requests.map((r) => [r.id, r.status]).slice(0, 3)).toEqual([
      [id, undefined], // the killed attempt: never answered
      [id, 500],
      [id, 204],
    ]);
    expect(untagged(rx.requests[3]?.id ?? "")).toBe("msg_6_7");
    expect(new Set(rx.requests.slice(0, 3).map((r) => r.body)).size).toBe(1);
    expect(rx.eventIds()).toEqual(range(1, 7));
    expect(await store.readDelivery()).toMatchObject({ cursor: 7, attempts: 0, pending: null });
  });

  it("gets a receiver that was down for a while everything afterwards, in order", async () => {
    const { store, append } = await realStore(backend);
    await append(10);
    const rx = await receiver();
    const loop = deliveryLoop(store, rx.url);
    await loop.settled("idle");
    await rx.down();

    const backoffs: number[] = [];
    for (let tick = 0; tick < 6; tick++) {
      await append(7);
      if (tick === 0) loop.delivery.wake();
      else loop.clock.advance(backoffs.at(-1) as number);
      backoffs.push((await loop.settled("backoff")).ms);
    }
    // A wake (a page committed) does not cut a backoff short.
    loop.delivery.wake();
    expect((await loop.settled("backoff")).ms).toBe(backoffs.at(-1));
    const down = await store.readDelivery();
    expect(down).toMatchObject({ attempts: 6, cursor: 10 });
    expect(untagged(down.pending?.id ?? "")).toBe("msg_11_17");
    expect(down.lastError).toContain("ECONNREFUSED");
    // Exponential with jitter in [50%, 100%]: 1 s, 2 s, 4 s, ...
    backoffs.forEach((ms, i) => {
      expect(ms).toBeGreaterThanOrEqual(500 * 2 ** i);
      expect(ms).toBeLessThanOrEqual(1000 * 2 ** i);
    });

    await rx.up();
    loop.clock.advance(backoffs.at(-1) as number);
    await loop.settled("idle");
    expect(rx.delivered().map((m) => untagged(m.id))).toEqual(["msg_1_10", "msg_11_17", "msg_18_52"]);
    expect(rx.delivered()[1]?.id).toBe(down.pending?.id);
    expect(rx.eventIds()).toEqual(range(1, 52));
    expect(await store.readDelivery()).toMatchObject({ cursor: 52, attempts: 0, nextAttemptAt: null });
  });

  it("sends the pending message first, then a replay as new messages, then live events", async () => {
    const { store, append, replays } = await realStore(backend);
    await append(5);
    const rx = await receiver();
    rx.answer({ status: 500 }, {});
    const loop = deliveryLoop(store, rx.url, { batch: 3 });
    const backoff = await loop.settled("backoff");
    const replay = await store.requestReplay(2, 4, loop.clock.now().toISOString());
    await append(2);
    loop.clock.advance(backoff.ms);
    await loop.settled("idle");
    expect(rx.delivered().map((m) => untagged(m.id))).toEqual([
      "msg_1_3",
      `msg_2_4_replay${replay}`,
      "msg_4_6",
      "msg_7_7",
    ]);
    expect(rx.eventIds()).toEqual([1, 2, 3, 2, 3, 4, 4, 5, 6, 7]);
    expect((await replays())[0]).toEqual({ next: 5, finishedAt: loop.clock.now().toISOString() });
    expect(await store.readDelivery()).toMatchObject({ cursor: 7, pending: null });

    // A range with nothing left to send finishes without a message.
    await store.requestReplay(100, 120, loop.clock.now().toISOString());
    loop.delivery.wake();
    await loop.settled("idle");
    expect((await replays())[1]?.finishedAt).not.toBeNull();
    expect(rx.delivered()).toHaveLength(4);
  });
  it("does not resend a pending message whose events the cap dropped meanwhile, and says so", async () => {
    const { store, append } = await realStore(backend);
    await append(5);
    // The cap drops the oldest three: the cursor moves past them, and they are gone.
    await sentAfterDrop(store, async (at) => {
      expect(await store.pruneEvents("2000-01-01T00:00:00.000Z", 2, true, at)).toEqual({
        pruned: 0,
        dropped: 3,
      });
    });
  });
});

// A store in memory where the state a test needs is easier set than made: a stored next attempt
// across a restart; events dropped by the cap and only later pruned.
describe("webhook delivery (in-memory store)", () => {
  it("waits as long as Retry-After asks (seconds or an HTTP date), also across a restart", async () => {
    const store = memoryEventStore();
    store.append({}, {}, {});
    const rx = await receiver();
    rx.answer({ status: 429, retryAfter: "120" }, {});
    const loop = deliveryLoop(store, rx.url);
    expect(await loop.settled("backoff")).toEqual({ ms: 120_000, why: "backoff" });
    const start = loop.clock.now().getTime();
    expect((await store.readDelivery()).nextAttemptAt).toBe(new Date(start + 120_000).toISOString());

    // Restarted meanwhile: the stored next attempt holds.
    await loop.stop();
    const clock = loop.clock;
    clock.advance(20_000);
    const again = deliveryLoop(store, rx.url, { clock });
    expect(await again.settled("backoff")).toEqual({ ms: 100_000, why: "backoff" });
    clock.advance(99_999);
    expect(rx.requests).toHaveLength(1);
    expect(clock.pending()).toBe(1); // the loop's own timer, not yet due
    rx.answer({ status: 503, retryAfter: new Date(start + 120_000 + 90_000).toUTCString() }, {});
    clock.advance(1);
    expect(await again.settled("backoff")).toEqual({ ms: 90_000, why: "backoff" });
    clock.advance(90_000);
    await again.settled("idle");
    expect(rx.requests.map((r) => r.status)).toEqual([429, 503, 204]);
    expect(rx.eventIds()).toEqual([1, 2, 3]);
  });

  it("gives a new mirror's first message a webhook-id the receiver has not seen, though its event ids are", async () => {
    // A receiver deduplicating on webhook-id would drop the new mirror's events as seen.
    const rx = await receiver();
    for (const mirror of [1, 2]) {
      const store = memoryEventStore();
      store.append({}, {});
      const loop = deliveryLoop(store, rx.url);
      await loop.settled("idle");
      await loop.stop();
      expect(rx.delivered()).toHaveLength(mirror);
    }
    const [old, renewed] = rx.delivered().map((m) => m.id) as [string, string];
    expect([untagged(old), untagged(renewed)]).toEqual(["msg_1_2", "msg_1_2"]);
    expect(renewed).not.toBe(old);
    expect(rx.eventIds()).toEqual([1, 2, 1, 2]);
  });

  it("takes the webhook-id's tag from its tag source", async () => {
    const store = memoryEventStore();
    store.append({});
    const rx = await receiver();
    const loop = deliveryLoop(store, rx.url, { tag: () => "0123abcd" });
    await loop.settled("idle");
    expect(rx.delivered().map((m) => m.id)).toEqual(["msg_1_1_0123abcd"]);
  });

  it("does not resend a pending message whose events were dropped and pruned meanwhile, and says so", async () => {
    const store = memoryEventStore();
    store.append(...range(1, 5).map(() => ({})));
    // The cap drops the oldest three (the cursor moves past them); retention then deletes them.
    await sentAfterDrop(store, async (at) => {
      expect(store.pruneEvents("2100-01-01T00:00:00.000Z", 2, true, at)).toEqual({ pruned: 0, dropped: 3 });
      expect(store.pruneEvents("2100-01-01T00:00:00.000Z", 2, true, at)).toEqual({ pruned: 3, dropped: 0 });
    });
  });
});

/**
 * Five events in `store`, their message failed once; `drop` (given the time) takes the first three
 * away meanwhile: the retry does not resend the message as it was, says so, and sends the rest.
 */
async function sentAfterDrop(store: EventStore, drop: (at: string) => Promise<void>) {
  const rx = await receiver();
  rx.answer({ status: 500 }, {});
  const loop = deliveryLoop(store, rx.url);
  const backoff = await loop.settled("backoff");
  await drop(loop.clock.now().toISOString());
  loop.clock.advance(backoff.ms);
  await loop.settled("idle");
  expect(untagged(rx.requests[0]?.id ?? "")).toBe("msg_1_5");
  expect(rx.delivered().map((m) => untagged(m.id))).toEqual(["msg_4_5"]);
  expect(loop.logger.lines.filter((l) => l.level === "warn").map((l) => l.msg)).toContain(
    `webhook message ${rx.requests[0]?.id} cannot be sent again as it was: events of its range were pruned or ` +
      "dropped since; what is left of it goes in a new message",
  );
  expect(await store.readDelivery()).toMatchObject({ cursor: 5, dropped: 3, pending: null });
}
