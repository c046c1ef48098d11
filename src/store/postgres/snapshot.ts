/**
 * Snapshots of a PostgreSQL mirror for the status reads: one pool connection each, in a read-only
 * REPEATABLE READ transaction, never the writer's connection, so a page view never waits behind a batch.
 */
import type { Pool } from "pg";
import type { MirrorReader, Snapshot } from "../snapshot.js";
import { queryOn } from "./sql.js";

/**
 * How long one statement of a snapshot may run, ms: a page view answers 503 rather than hang behind
 * an exclusive lock (a migration), as SQLite's busy timeout makes it.
 */
export const READ_TIMEOUT_MS = 5000;

/** Snapshots on `pool`'s connections; `location` is the URL without its password. */
export function postgresSnapshot(pool: Pool, location: string): Snapshot {
  return async <T>(read: (db: MirrorReader) => Promise<T>): Promise<T> => {
    const client = await pool.connect();
    let broken: Error | undefined;
    try {
      await client.query(
        `BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; SET LOCAL statement_timeout = ${READ_TIMEOUT_MS}`,
      );
      const query = queryOn(client);
      const result = await read({
        all: (sql, params) => query(sql, params),
        database: async () => {
          const [row] = await query<{ bytes: number }>(
            "SELECT pg_database_size(current_database()) AS bytes",
          );
          return { path: location, bytes: row?.bytes ?? 0, walBytes: 0, backend: "postgres" };
        },
      });
      await client.query("COMMIT");
      return result;
    } catch (err) {
      // A connection that cannot even roll back is closed, not given back to the pool.
      await client.query("ROLLBACK").catch((e: Error) => {
        broken = e;
      });
      throw err;
    } finally {
      client.release(broken ?? false);
    }
  };
}
