/**
 * Event positions past 2^31 on both databases: PostgreSQL's event ids and the columns that hold one
 * are bigint (a 32-bit integer would stop every page once the stream passed 2,147,483,647), and the
 * pg driver's int8 strings come back as numbers. An event there is written, pulled over GET /events
 * and by `booking-sync events` (the build, as a subprocess), delivered and replayed.
 */
import { expect, it } from "vitest";
import { servedEvent } from "../src/events/message.js";
import { dbEnv } from "./support/db-env.js";
import { afterTest, deliveryLoop, receiver } from "./support/delivery-harness.js";
import { type EventMirror, eventMirror } from "./support/event-mirror.js";
import { eventsEndpoint } from "./support/events-endpoint.js";
import { runCli } from "./support/harness.js";
import { type BackendKind, describeBackends } from "./support/postgres.js";
import { untagged } from "./support/webhook-ids.js";

/** Past what a 32-bit integer holds. */
const BIG = 3_000_000_000;

/** Makes the mirror's next event id and next replay id `next`, as a long-lived mirror would have them. */
async function restartIdsAt(m: EventMirror, kind: BackendKind, next: number): Promise<void> {
  if (kind === "postgres") {
    await m.execute(`ALTER SEQUENCE booking_events_id_seq RESTART WITH ${next}`);
    await m.execute(`ALTER SEQUENCE event_replays_id_seq RESTART WITH ${next}`);
    return;
  }
  await m.execute("DELETE FROM sqlite_sequence WHERE name IN ('booking_events', 'event_replays')");
  await m.execute(
    `INSERT INTO sqlite_sequence (name, seq) VALUES ('booking_events', ${next - 1}), ('event_replays', ${next - 1})`,
  );
}

describeBackends("event ids past 2^31", (backend) => {
  it("are written, pulled over GET /events and by booking-sync events, delivered and replayed as numbers", async () => {
    const m = await eventMirror(backend);
    afterTest(() => m.close());
    await restartIdsAt(m, backend.kind, BIG);
    const ids = await m.append(3);
    expect(ids).toEqual([BIG, BIG + 1, BIG + 2]);
    expect(await m.events.lastEventId()).toBe(BIG + 2);
    expect(await m.events.firstEventId()).toBe(BIG);

    const get = await eventsEndpoint(m.events);
    const page = await get(`?after=${BIG}`);
    expect(page.status).toBe(200);
    expect(((page.json?.events ?? []) as Array<{ id: unknown }>).map((e) => e.id)).toEqual([
      BIG + 1,
      BIG + 2,
    ]);
    expect(page.json).toMatchObject({ last: BIG + 2, first: BIG });
    expect((await get(`?after=${BIG + 2}`)).json).toMatchObject({ events: [], last: BIG + 2 });

    const printed = await runCli(["events", "--after", String(BIG - 1)], dbEnv(backend.kind, m.location));
    const { stream } = await m.events.bounds();
    expect(printed).toMatchObject({
      code: 0,
      stderr: `booking-sync: events stream ${stream}: resume with --after <the last id read> --stream ${stream}\n`,
    });
    const stored = await m.events.readEvents(0, 10);
    expect(printed.stdout).toBe(`${stored.map(servedEvent).join("\n")}\n`);

    const rx = await receiver();
    const loop = deliveryLoop(m.events, rx.url, { batch: 2 });
    await loop.settled("idle");
    expect(rx.eventIds()).toEqual(ids);
    expect(rx.delivered().map((r) => untagged(r.id))).toEqual([
      `msg_${BIG}_${BIG + 1}`,
      `msg_${BIG + 2}_${BIG + 2}`,
    ]);
    expect((await m.events.readDelivery()).cursor).toBe(BIG + 2);
    const [row] = await m.query<{ cursor: unknown }>("SELECT cursor FROM event_delivery");
    expect(Number(row?.cursor)).toBe(BIG + 2);

    const replay = await m.events.requestReplay(BIG + 1, BIG + 2, loop.clock.now().toISOString());
    expect(replay).toBe(BIG);
    expect(await m.events.nextReplay()).toEqual({ id: BIG, from: BIG + 1, to: BIG + 2, next: BIG + 1 });
    loop.delivery.wake();
    await loop.settled("idle");
    expect(untagged(rx.delivered().at(-1)?.id ?? "")).toBe(`msg_${BIG + 1}_${BIG + 2}_replay${BIG}`);
    expect(rx.eventIds()).toEqual([...ids, BIG + 1, BIG + 2]);
    expect(await m.events.nextReplay()).toBeNull();
    const [done] = await m.query<{ next_id: unknown }>("SELECT next_id FROM event_replays");
    expect(Number(done?.next_id)).toBe(BIG + 3);
    expect(await m.events.readDelivery()).toMatchObject({ cursor: BIG + 2, pending: null });
  });
});
