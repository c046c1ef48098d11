/** Brings a PostgreSQL mirror's schema up to date, one process at a time. */
import { fileURLToPath } from "node:url";
import { drizzle } from "drizzle-orm/node-postgres";
import { migrate } from "drizzle-orm/node-postgres/migrator";
import type pg from "pg";
import { wrapError } from "../../errors.js";
import type { Logger } from "../../sync/ports.js";

/** Resolved from this file, so it works from `src/` (vitest), `dist/` (tsc) and a Docker image alike. */
const MIGRATIONS = fileURLToPath(new URL("../../../drizzle/postgres", import.meta.url));

/** Where drizzle records applied migrations (its defaults, named so they can be counted). */
const JOURNAL = { migrationsSchema: "drizzle", migrationsTable: "__drizzle_migrations" } as const;

/**
 * Key of the session advisory lock held while migrating ("book" in ASCII). Advisory locks are per
 * database, so mirrors in other databases of the same server do not wait for each other.
 */
export const MIGRATION_LOCK_KEY = 0x626f6f6b;

/**
 * Applies the migrations under `drizzle/postgres/` not yet applied. Two workers starting together
 * would both see them pending and race; the advisory lock, held on one connection around the whole
 * run, makes the second wait and then find nothing to do.
 */
export async function migratePostgres(pool: pg.Pool, logger?: Logger): Promise<void> {
  let client: pg.PoolClient;
  try {
    client = await pool.connect();
  } catch (err) {
    throw wrapError("migrate database: connect", err);
  }
  let failed: unknown;
  try {
    await client.query("SELECT pg_advisory_lock($1)", [MIGRATION_LOCK_KEY]);
    try {
      const before = await appliedMigrations(client);
      await migrate(drizzle({ client }), { migrationsFolder: MIGRATIONS, ...JOURNAL });
      const applied = (await appliedMigrations(client)) - before;
      if (applied > 0) logger?.info({ applied, total: before + applied }, "database migrated");
    } finally {
      await client.query("SELECT pg_advisory_unlock($1)", [MIGRATION_LOCK_KEY]);
    }
  } catch (err) {
    failed = err;
    throw wrapError("migrate database", err);
  } finally {
    // A connection that failed may still hold the lock or a transaction: closed, not reused.
    client.release(failed !== undefined);
  }
}

async function appliedMigrations(client: pg.PoolClient): Promise<number> {
  const table = `${JOURNAL.migrationsSchema}.${JOURNAL.migrationsTable}`;
  const { rows } = await client.query("SELECT to_regclass($1) IS NOT NULL AS found", [table]);
  if (!rows[0]?.found) return 0;
  const count = await client.query<{ n: number }>(`SELECT count(*)::integer AS n FROM ${table}`);
  return count.rows[0]?.n ?? 0;
}
