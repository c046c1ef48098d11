/**
 * Retention beside the webhook delivery loop, on a real mirror of each database: a stored pending
 * message is rebuilt from its events at each retry, so retention must keep them until it is sent
 * (else the retry sends another body, or nothing, under the same webhook-id); an unfinished replay
 * keeps what it has still to send; and a replay asked for a range already pruned starts at the oldest
 * event kept, saying so.
 */
import { expect, it } from "vitest";
import { applyRetention } from "../src/events/retention.js";
import { afterTest, deliveryLoop, realTimeClock, receiver } from "./support/delivery-harness.js";
import { eventMirror } from "./support/event-mirror.js";
import { memoryLogger } from "./support/fakes.js";
import { type Backend, describeBackends } from "./support/postgres.js";
import { untagged } from "./support/webhook-ids.js";

const DAY_MS = 86_400_000;
const ids = (events: ReadonlyArray<{ id: number }>) => events.map((e) => e.id);

/** A real mirror on `backend` whose loop's clock is the test's, closed after the test. */
async function setup(backend: Backend) {
  const m = await eventMirror(backend);
  afterTest(() => m.close());
  const clock = realTimeClock();
  const daysAgo = (days: number) => new Date(clock.now().getTime() - days * DAY_MS).toISOString();
  /** Retention as the daemon applies it after a run, with a webhook configured: 30 days. */
  const retention = () =>
    applyRetention(
      { store: m.events, clock, logger: memoryLogger() },
      { eventsRetentionDays: 30, eventsMaxUndelivered: 1_000_000, webhook: true },
    );
  const kept = async () => ids(await m.events.readEvents(0, 1000));
  return { m, store: m.events, clock, daysAgo, retention, kept };
}

describeBackends("retention beside the delivery loop", (backend) => {
  it("keeps a pending replay message's events and what the replay has left: the retry resends the same body under the same id", async () => {
    const { m, store, clock, daysAgo, retention, kept } = await setup(backend);
    await m.append(6, daysAgo(40)); // 1-6: older than the 30 days kept
    await m.append(2, daysAgo(0)); // 7-8
    const rx = await receiver();
    const loop = deliveryLoop(store, rx.url, { clock, batch: 2 });
    await loop.settled("idle");
    expect((await store.readDelivery()).cursor).toBe(8); // all delivered: 1-6 are old enough to go

    // The replay's first message is taken, its second refused: it is pending, the replay at 4.
    const replay = await store.requestReplay(2, 6, clock.now().toISOString());
    rx.answer({}, { status: 500 }, {});
    loop.delivery.wake();
    const backoff = await loop.settled("backoff");
    const sent = rx.requests.length;
    const refused = rx.requests.at(-1);
    expect(untagged(refused?.id ?? "")).toBe(`msg_4_5_replay${replay}`);

    await retention();
    // 1 is delivered and not in the replay; 2-3 were sent again already; 4-5 are the pending
    // message, 6 the rest of the replay: kept until it finishes.
    expect(await kept()).toEqual([4, 5, 6, 7, 8]);

    loop.clock.advance(backoff.ms);
    await loop.settled("idle");
    expect(rx.requests.slice(sent).map((r) => [r.id, r.body])).toEqual([
      [refused?.id, refused?.body],
      [expect.stringMatching(new RegExp(`^msg_6_6_replay${replay}_`)), expect.any(String)],
    ]);
    expect(loop.logger.lines.map((l) => l.msg).filter((m) => m?.includes("cannot be sent again"))).toEqual(
      [],
    );
    expect(rx.rejected).toEqual([]);

    // The replay finished: what it held goes at the next retention.
    expect(await store.nextReplay()).toBeNull();
    await retention();
    expect(await kept()).toEqual([7, 8]);
  });

  it("keeps what an unfinished replay has left to send, and no more", async () => {
    const { m, store, clock, daysAgo, retention, kept } = await setup(backend);
    await m.append(6, daysAgo(40)); // 1-6: delivered and older than the 30 days kept
    await m.append(1, daysAgo(0)); // 7
    await store.saveDelivery({ cursor: 7 });
    // Asked for and not started (no loop runs here): 2-3 wait to be sent again; 1, 4, 5 and 6 may go.
    await store.requestReplay(2, 3, clock.now().toISOString());
    await retention();
    expect(await kept()).toEqual([2, 3, 7]);
  });

  it("never resends a live message the cursor moved into under its id, though retention pruned only part of it", async () => {
    const { m, store, clock, daysAgo, retention, kept } = await setup(backend);
    await m.append(2, daysAgo(40)); // 1-2
    const rx = await receiver();
    const loop = deliveryLoop(store, rx.url, { clock, batch: 3 });
    await loop.settled("idle");
    await m.append(1, daysAgo(0)); // 3
    await m.append(1, daysAgo(40)); // 4: its page read with an old time (`at` is not monotonic in id)
    await m.append(1, daysAgo(0)); // 5
    rx.answer({ status: 500 }, {});
    loop.delivery.wake();
    const backoff = await loop.settled("backoff");
    const refused = rx.requests.at(-1);
    expect(untagged(refused?.id ?? "")).toBe("msg_3_5");

    // The cap moved the cursor into the message but was stopped before deleting what it dropped (a
    // kill between its two statements): 3-4 count as delivered, and only 4 is old enough to go.
    await store.saveDelivery({ cursor: 4 });
    await retention();
    expect(await kept()).toEqual([3, 5]);
    loop.clock.advance(backoff.ms);
    await loop.settled("idle");
    // Not msg_3_5 with 3 and 5 in it: what is left goes under a new id, and the log says why.
    expect(rx.requests.slice(-1).map((r) => [untagged(r.id), r.status])).toEqual([["msg_5_5", 204]]);
    expect(rx.requests.filter((r) => r.id === refused?.id).map((r) => r.body)).toEqual([refused?.body]);
    expect(loop.logger.lines.map((l) => l.msg)).toContain(
      `webhook message ${refused?.id} cannot be sent again as it was: events of its range were pruned or ` +
        "dropped since; what is left of it goes in a new message",
    );
  });

  it("starts a replay of a range already pruned at the oldest event kept, and says so", async () => {
    const { m, store, clock, daysAgo, retention, kept } = await setup(backend);
    await m.append(4, daysAgo(40)); // 1-4
    await m.append(2, daysAgo(0)); // 5-6
    const rx = await receiver();
    const loop = deliveryLoop(store, rx.url, { clock });
    await loop.settled("idle");
    await retention();
    expect(await kept()).toEqual([5, 6]);

    const partly = await store.requestReplay(1, 6, clock.now().toISOString());
    const wholly = await store.requestReplay(2, 3, clock.now().toISOString());
    loop.delivery.wake();
    await loop.settled("idle");
    expect(rx.delivered().map((r) => untagged(r.id))).toEqual(["msg_1_6", `msg_5_6_replay${partly}`]);
    expect(await store.nextReplay()).toBeNull();
    const said = loop.logger.lines.filter((l) => l.level === "warn").map((l) => l.msg);
    expect(said).toEqual([
      `replay ${partly}: events 1 to 4 were pruned before it reached them (EVENTS_RETENTION_DAYS); it starts at 5`,
      `replay ${wholly}: events 2 to 3 were pruned before it reached them (EVENTS_RETENTION_DAYS); nothing is left to send`,
    ]);
  });
});
