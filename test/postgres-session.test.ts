/**
 * The PostgreSQL writer's session where it differs from SQLite's batch: any statement that fails in
 * the open transaction aborts it, a read's too, and the pages saved in it must then count as lost.
 */
import { afterEach, describe, expect, it } from "vitest";
import { openPostgresStore, type PostgresStore } from "../src/store/postgres/store.js";
import { type FreshDatabase, freshPostgresDatabase, postgresAvailable } from "./support/postgres.js";
import { feedBatch, okSummary, summaryRaw } from "./support/store-fixtures.js";

const T1 = "2025-02-01T00:00:00.000Z";
const scope = { runId: 1, startedAt: T1, at: T1 };

let db: FreshDatabase | undefined;
let store: PostgresStore | undefined;
afterEach(async () => {
  await store?.close();
  await db?.drop();
  store = undefined;
  db = undefined;
});

describe.skipIf(!postgresAvailable())("the PostgreSQL writer's session", () => {
  it("a read that fails inside the open batch loses its pages: flush throws, nothing committed, the next run saves again", async () => {
    db = await freshPostgresDatabase();
    store = await openPostgresStore(db.url, { batch: { pages: 1_000, ms: 3_600_000 } });
    await store.save(feedBatch([okSummary(summaryRaw(1))], T1));
    // PostgreSQL refuses a negative LIMIT (SQLite reads it as none): the transaction is aborted.
    await expect(store.unlistedTimes(scope, -1)).rejects.toThrow(/LIMIT must not be negative/);
    await expect(store.flush()).rejects.toThrow(/saved pages were not committed/);
    await expect(store.save(feedBatch([okSummary(summaryRaw(2))], T1))).rejects.toThrow(/not committed/);
    const count = async () => (await store?.pool.query("SELECT count(*) AS n FROM bookings"))?.rows[0].n;
    expect(await count()).toBe(0);

    await store.startRun({ kind: "sync", stream: "feed", startedAt: T1, checkpointBefore: null });
    await store.save(feedBatch([okSummary(summaryRaw(3))], T1));
    await store.flush();
    expect(await count()).toBe(1);
  });
});
