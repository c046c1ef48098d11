/**
 * PostgreSQL for tests: the run's server (test/support/postgres-server.ts), a fresh database per
 * caller so test files running in parallel never share one, and suites run once per backend.
 * (`inject("postgresUrl")` is typed by the declaration in postgres-server.ts.)
 */
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, describe, inject } from "vitest";

/** Whether this run has a PostgreSQL server; without one, the Postgres variants are skipped. */
export function postgresAvailable(): boolean {
  return inject("postgresUrl") !== null;
}

export interface FreshDatabase {
  /** The new database's URL. */
  url: string;
  /** Drops it, ending any connection still open to it. */
  drop: () => Promise<void>;
}

/** A new, empty database on the run's server, named at random. */
export async function freshPostgresDatabase(): Promise<FreshDatabase> {
  const server = inject("postgresUrl");
  if (server === null) throw new Error("no PostgreSQL server in this run: check postgresAvailable() first");
  const name = `booking_sync_test_${randomBytes(6).toString("hex")}`;
  await onServer(server, `CREATE DATABASE ${name}`);
  const url = new URL(server);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: () => onServer(server, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  };
}

async function onServer(server: string, statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: server, connectionTimeoutMillis: 30_000 });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

export type BackendKind = "sqlite" | "postgres";

export interface Backend {
  kind: BackendKind;
  /** A fresh, empty mirror each call: a file path in a new temp folder, or a new database's URL. */
  url: () => Promise<string>;
}

/**
 * Runs the suite `fn` once per backend, as `name (sqlite)` and `name (postgres)`; the latter is
 * skipped when the run has no server. Whatever `url()` made is removed after the suite.
 */
export function describeBackends(name: string, fn: (backend: Backend) => void): void {
  for (const kind of ["sqlite", "postgres"] as const) {
    describe.skipIf(kind === "postgres" && !postgresAvailable())(`${name} (${kind})`, () => {
      const cleanups: Array<() => Promise<void> | void> = [];
      afterAll(async () => {
        for (const cleanup of cleanups.splice(0)) await cleanup();
      });
      const url = async () => {
        if (kind === "postgres") {
          const db = await freshPostgresDatabase();
          cleanups.push(db.drop);
          return db.url;
        }
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "booking-sync-store-"));
        cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
        return path.join(dir, "mirror.db");
      };
      fn({ kind, url });
    });
  }
}
