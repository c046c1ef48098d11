/**
 * vitest globalSetup: a PostgreSQL server for the whole run, its URL provided as `postgresUrl`.
 * BOOKING_TEST_POSTGRES_URL names one to use; otherwise a throwaway server is started from the
 * newest local initdb (bench/postgres-server.ts, shared with the sync benchmark) and removed at the
 * end. With neither, CI fails and a developer's run skips the Postgres variants.
 */
import type { TestProject } from "vitest/node";
import {
  type PostgresServer,
  pingPostgres,
  postgresBinDir,
  startThrowawayPostgres,
} from "../../bench/postgres-server.js";

declare module "vitest" {
  export interface ProvidedContext {
    /** The server's URL (its `postgres` database), or null when the Postgres variants are skipped. */
    postgresUrl: string | null;
  }
}

/** Throwaway data: durability buys nothing here. */
const TEST_SETTINGS = ["-c fsync=off -c synchronous_commit=off -c full_page_writes=off"];

export default async function setup(project: TestProject): Promise<() => void> {
  const started = Date.now();
  let server: PostgresServer | undefined;
  try {
    server = await findServer();
  } catch (err) {
    if (process.env.CI || process.env.BOOKING_TEST_POSTGRES_URL) throw err;
    console.warn(`PostgreSQL: ${(err as Error).message}; the Postgres variants of the tests are skipped`);
  }
  if (server && !process.env.BOOKING_TEST_POSTGRES_URL) {
    console.info(`PostgreSQL: throwaway server up in ${Date.now() - started} ms`);
  }
  project.provide("postgresUrl", server?.url ?? null);
  return () => server?.stop();
}

async function findServer(): Promise<PostgresServer> {
  const given = process.env.BOOKING_TEST_POSTGRES_URL;
  if (given) {
    await pingPostgres(given, "BOOKING_TEST_POSTGRES_URL");
    return { url: given, stop: () => {} };
  }
  const bin = postgresBinDir();
  if (!bin) {
    throw new Error(
      "no initdb found (in /usr/lib/postgresql/*/bin or on PATH), nor BOOKING_TEST_POSTGRES_URL",
    );
  }
  return startThrowawayPostgres(bin, TEST_SETTINGS);
}
