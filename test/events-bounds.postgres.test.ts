/**
 * The newest event id a PostgreSQL mirror has given, read by a user who may read the tables but not
 * the identity's sequence (an analyst's read-only role): the newest id kept stands in, without an
 * error that would abort the reader's snapshot.
 */
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
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
    // The events 4 and 5 were deleted: without the sequence, 3 is the newest id this user can know.
    expect(await bounds(role)).toEqual({ first: 1, assigned: 3, stream: owner.stream });
  });
});
