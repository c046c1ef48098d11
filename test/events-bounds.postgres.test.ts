/**
 * The newest event id a PostgreSQL mirror has given, read by a user who may read the tables but not
 * the identity's sequence (an analyst's read-only role): unknown to it, so no consumer's place is
 * judged by it, and no error aborts the reader's snapshot.
 */
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { lostPlace } from "../src/events/pull.js";
import { readBounds } from "../src/store/event-bounds.js";
import type { MirrorReader } from "../src/store/snapshot.js";
import { afterTest } from "./support/delivery-harness.js";
import { eventMirror } from "./support/event-mirror.js";
import { freshPostgresDatabase, postgresAvailable } from "./support/postgres.js";

describe.skipIf(!postgresAvailable())("events bounds (PostgreSQL)", () => {
  const drops: Array<() => Promise<void>> = [];
  afterAll(async () => {
    for (const drop of drops) await drop();
  });

  it("reads the sequence when it may, and the newest id kept when it may not", async () => {
    const db = await freshPostgresDatabase();
    drops.push(db.drop);
    const m = await eventMirror({ kind: "postgres", url: async () => db.url });
    afterTest(() => m.close());
    await m.append(5);
    await m.execute("DELETE FROM booking_events WHERE id > 3");
    const role = `events_reader_${Date.now().toString(36)}`;
    await m.execute(`CREATE ROLE ${role} LOGIN PASSWORD 'reader'`);
    // Roles are the server's, not the database's: dropped after the test, before the mirror closes.
    afterTest(async () => {
      await m.execute(`DROP OWNED BY ${role}`);
      await m.execute(`DROP ROLE ${role}`);
    });
    await m.execute(`GRANT SELECT ON ALL TABLES IN SCHEMA public TO ${role}`);

    const bounds = async (user?: string) => {
      const url = new URL(db.url);
      if (user) [url.username, url.password] = [user, "reader"];
      const client = new pg.Client({ connectionString: url.toString() });
      await client.connect();
      try {
        await client.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
        const reader: MirrorReader = {
          all: async <R>(sql: string, params?: readonly unknown[]) =>
            (await client.query(sql, params as unknown[])).rows as R[],
          database: () => Promise.reject(new Error("not needed")),
        };
        return await readBounds(reader, true);
      } finally {
        await client.end();
      }
    };
    const owner = await bounds();
    expect(owner).toMatchObject({ first: 1, assigned: 5 });
    expect(owner.stream).toMatch(/^[0-9a-f]{32}$/);
    // The events 4 and 5 were deleted: without the sequence this user cannot know the newest id
    // given (the newest kept, 3, would refuse a consumer at 5), so none is judged by it.
    expect(await bounds(role)).toEqual({ first: 1, assigned: null, stream: owner.stream });
    expect(lostPlace(5, owner.stream ?? undefined, await bounds(role))).toBeUndefined();
    // A role granted the tables before the stream's table existed reads no identity, not an error.
    await m.execute(`REVOKE SELECT ON event_stream FROM ${role}`);
    expect(await bounds(role)).toEqual({ first: 1, assigned: null, stream: null });
  });
});
