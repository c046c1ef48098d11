/**
 * The mirror in PostgreSQL: the same port as SQLite's, over one writer connection (session.ts) that
 * also holds the writer lock (lease.ts), and a small pool for everything that only reads.
 */
import type { Pool } from "pg";
import { ConfigError, wrapError } from "../../errors.js";
import { DEFAULT_BATCH } from "../batch.js";
import { eventStore } from "../event-store.js";
import type { Ask } from "../mirror/ask.js";
import { POSTGRES } from "../mirror/dialect.js";
import { askPostgres, writePostgresPage } from "../mirror/execute.js";
import type { OpenOptions } from "../open.js";
import { MIRROR_TABLES } from "../status.js";
import type { Mirror } from "../store.js";
import { answering, statusReads, storeSql } from "../store-reads.js";
import { createPool, redactUrl } from "./connect.js";
import { takePostgresLease } from "./lease.js";
import { migratePostgres } from "./migrate.js";
import { openSession, type Session } from "./session.js";
import { postgresSnapshot } from "./snapshot.js";

/** As SQLite's, but for the file mode; and the password, when it is not in the URL (a `_FILE` variable). */
export type PostgresOptions = Omit<OpenOptions, "mode"> & { password?: string | undefined };

export interface PostgresStore extends Mirror {
  readonly backend: "postgres";
  /** The pool the readers use (status, metrics); the writer has its own connection. */
  readonly pool: Pool;
}

/** Connects, migrates (one worker at a time; not when `readonly`) and opens the writer's connection. */
export async function openPostgresStore(url: string, options: PostgresOptions = {}): Promise<PostgresStore> {
  const location = redactUrl(url);
  const pool = createPool(url, { password: options.password });
  // An idle client's error (the server restarting) must not end the process; the next use fails.
  pool.on("error", (err) => options.logger?.warn({ err }, "an idle PostgreSQL connection failed"));
  try {
    if (options.readonly) await checkTables(pool, location);
    else await migratePostgres(pool, options.logger);
    return assemble(pool, location, await connect(pool, options), options);
  } catch (err) {
    await pool.end().catch(() => {});
    throw wrapError(`open database ${location}`, err);
  }
}

/** Throws a config error (exit 2) when the database lacks a table of the mirror. */
async function checkTables(pool: Pool, location: string): Promise<void> {
  const { rows } = await pool.query<{ missing: number }>(
    "SELECT count(*) FILTER (WHERE to_regclass(name) IS NULL) AS missing FROM unnest($1::text[]) AS name",
    [MIRROR_TABLES],
  );
  if ((rows[0]?.missing ?? 0) === 0) return;
  throw new ConfigError(`database ${location} has no booking-sync tables`, {
    hint: "point --db or BOOKING_DB_URL at the mirror, or create the tables with `booking-sync migrate`",
  });
}

async function connect(pool: Pool, options: PostgresOptions): Promise<Session> {
  const client = await pool.connect();
  if (options.readonly) {
    try {
      await client.query("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY");
    } catch (err) {
      client.release(true);
      throw err;
    }
  }
  return openSession(
    client,
    options.batch ?? DEFAULT_BATCH,
    (err) => options.logger?.warn({ err }, "the writer's PostgreSQL connection was lost"),
    options.clock,
    options.onCommit,
  );
}

/** The statements both stores answer, in PostgreSQL's dialect. */
const SQL = storeSql(POSTGRES);

function assemble(pool: Pool, location: string, first: Session, options: PostgresOptions): PostgresStore {
  let session = first;
  /** The run being recorded, for `booking_changes`. */
  let currentRun: number | null = null;
  const recordEvents = options.events ?? true;
  const snapshot = postgresSnapshot(pool, location);
  const turn = <T>(read: Ask<T>) => session.turn((q) => askPostgres(q, read));
  const afterPages = <T>(write: Ask<T>) =>
    session.afterPages(async (q) => {
      const answer = await askPostgres(q, write, recordEvents);
      // Reconcile's marks commit events outside the batch: waiters hear of them as of a page's.
      if (recordEvents && write.events) options.onCommit?.();
      return answer;
    });
  const { personalData } = options;
  return {
    backend: "postgres",
    location,
    pool,
    save: (page) =>
      session.page((q) =>
        writePostgresPage(q, page, { runId: currentRun, events: recordEvents, personal: personalData }),
      ),
    flush: () => session.flush(),
    ...answering(SQL.reads, turn),
    ...answering(SQL.afterPages, afterPages),
    readProgress: (stream) => turn(SQL.readProgress(stream)),
    async startRun(run) {
      await session.reset();
      currentRun = await afterPages(SQL.runs.startRun(run));
      return currentRun;
    },
    async finishRun(id, result) {
      // The run has flushed and reported any loss (sync/run.ts); its end is recorded whatever.
      await session.besidePages((q) => askPostgres(q, SQL.runs.finishRun(id, result)));
      currentRun = null;
    },
    async takeWriterLease(o) {
      // Only here is a lost connection replaced: the lock must be taken again on the new one.
      if (session.broken) {
        await session.close();
        session = await connect(pool, options);
      }
      return takePostgresLease(session, o);
    },
    ...statusReads(snapshot),
    events: eventStore(snapshot, (sql, params) => session.besidePages((q) => q(sql, params)), POSTGRES),
    async close() {
      await session.close();
      await pool.end();
    },
  };
}
