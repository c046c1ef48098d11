/**
 * A PostgreSQL mirror made before event positions were bigint (migrations 0000–0003) opens with its
 * events, its webhook's place and its replays kept: the identity columns change type with their
 * sequences, which go on from where they were and now reach past 2^31.
 */
import fs from "node:fs";
import path from "node:path";
import { drizzle } from "drizzle-orm/node-postgres";
import { migrate } from "drizzle-orm/node-postgres/migrator";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { afterTest } from "./support/delivery-harness.js";
import { eventMirror } from "./support/event-mirror.js";
import { freshPostgresDatabase, postgresAvailable } from "./support/postgres.js";
import { tempDir } from "./support/store-fixtures.js";

const BIG = 3_000_000_000;
const AT = "2026-11-27T10:00:00.000Z";

/** The PostgreSQL migrations folder as it stood up to `last` (its index). */
function migrationsUpTo(last: number): string {
  const temp = tempDir();
  afterTest(temp.cleanup);
  const out = temp.file("drizzle-postgres");
  fs.mkdirSync(path.join(out, "meta"), { recursive: true });
  const journal = JSON.parse(fs.readFileSync("drizzle/postgres/meta/_journal.json", "utf8"));
  journal.entries = journal.entries.filter((e: { idx: number }) => e.idx <= last);
  fs.writeFileSync(path.join(out, "meta", "_journal.json"), JSON.stringify(journal));
  for (const e of journal.entries as Array<{ tag: string }>)
    fs.copyFileSync(path.join("drizzle/postgres", `${e.tag}.sql`), path.join(out, `${e.tag}.sql`));
  return out;
}

describe.skipIf(!postgresAvailable())("migration 0004 (PostgreSQL): event positions become bigint", () => {
  const drops: Array<() => Promise<void>> = [];
  afterAll(async () => {
    for (const drop of drops) await drop();
  });

  it("keeps every event, the cursor and the replays, and the ids go on past 2^31", async () => {
    const db = await freshPostgresDatabase();
    drops.push(db.drop);
    const old = new pg.Client({ connectionString: db.url });
    await old.connect();
    try {
      await migrate(drizzle({ client: old }), {
        migrationsFolder: migrationsUpTo(3),
        migrationsSchema: "drizzle",
        migrationsTable: "__drizzle_migrations",
      });
      for (const n of [1, 2, 3])
        await old.query(
          "INSERT INTO booking_events (type, booking_id, at, data) VALUES ('booking.created', $1, $2, $3)",
          [`B-${n}`, AT, `{"type":"booking.created","bookingId":"B-${n}"}`],
        );
      await old.query("DELETE FROM booking_events WHERE id = 1"); // pruned: the sequence remembers it
      await old.query(
        `INSERT INTO event_delivery (name, cursor, message_id, message_first, message_last, message_replay)
         VALUES ('webhook', 2, 'msg_3_3_replay1_0a1b2c3d', 3, 3, 1)`,
      );
      await old.query(
        "INSERT INTO event_replays (from_id, to_id, next_id, requested_at) VALUES (2, 3, 3, $1)",
        [AT],
      );
    } finally {
      await old.end();
    }

    const m = await eventMirror({ kind: "postgres", url: async () => db.url });
    afterTest(() => m.close());
    expect((await m.events.readEvents(0, 10)).map((e) => [e.id, e.bookingId, e.data])).toEqual([
      [2, "B-2", '{"type":"booking.created","bookingId":"B-2"}'],
      [3, "B-3", '{"type":"booking.created","bookingId":"B-3"}'],
    ]);
    expect(await m.events.readDelivery()).toMatchObject({
      cursor: 2,
      pending: { id: "msg_3_3_replay1_0a1b2c3d", first: 3, last: 3, replay: 1 },
    });
    expect(await m.events.nextReplay()).toEqual({ id: 1, from: 2, to: 3, next: 3 });
    const columns = await m.query<{ name: string; type: string }>(
      `SELECT table_name || '.' || column_name AS name, data_type AS type FROM information_schema.columns
        WHERE table_name IN ('booking_events', 'event_delivery', 'event_replays')
          AND column_name IN ('id', 'cursor', 'message_first', 'message_last', 'message_replay', 'from_id', 'to_id', 'next_id')
        ORDER BY 1`,
    );
    expect(columns).toEqual(
      [
        "booking_events.id",
        "event_delivery.cursor",
        "event_delivery.message_first",
        "event_delivery.message_last",
        "event_delivery.message_replay",
        "event_replays.from_id",
        "event_replays.id",
        "event_replays.next_id",
        "event_replays.to_id",
      ].map((name) => ({ name, type: "bigint" })),
    );
    const sequences = await m.query<{ sequencename: string; data_type: string; max_value: string }>(
      `SELECT sequencename, data_type::text, max_value::text FROM pg_sequences
        WHERE sequencename IN ('booking_events_id_seq', 'event_replays_id_seq') ORDER BY 1`,
    );
    expect(sequences).toEqual(
      ["booking_events_id_seq", "event_replays_id_seq"].map((sequencename) => ({
        sequencename,
        data_type: "bigint",
        max_value: "9223372036854775807",
      })),
    );

    // The sequence goes on where it was (3), never handing out an id again, and past 2^31.
    expect(await m.append(1)).toEqual([4]);
    await m.execute(`ALTER SEQUENCE booking_events_id_seq RESTART WITH ${BIG}`);
    expect(await m.append(2)).toEqual([BIG, BIG + 1]);
    expect(await m.events.requestReplay(BIG, BIG + 1, AT)).toBe(2);
  });
});
