/**
 * A fresh mirror for each case of a property test, on either backend (`Backend` of postgres.ts),
 * opened as the CLI opens it. SQLite: a new file each case. PostgreSQL: one database per suite,
 * emptied between cases, since creating a database costs more than most cases.
 */
import pg from "pg";
import { isSqlite, type Mirror } from "../../src/store/store.js";
import { openBackendMirror } from "./mirror-harness.js";
import type { Backend } from "./postgres.js";

/** One case's mirror. */
export interface CaseMirror {
  /** The mirror as the sync writes it; replaced by `crash`. */
  store: Mirror;
  /** Ids in `bookings`, sorted: on SQLite as the writer's connection sees them, else as committed. */
  ids(): Promise<string[]>;
  /** Booking ids kept in `rejected_records`. */
  quarantined(): Promise<string[]>;
  /** What a killed process leaves: its open batch lost, the mirror reopened as its last commit left it. */
  crash(): Promise<void>;
  close(): Promise<void>;
}

/** Opens case mirrors on `backend` with the case's batch rule and no commit by age. */
export function propertyMirrors(backend: Backend): (batchPages: number) => Promise<CaseMirror> {
  let shared: { location: string; sql: pg.Client } | undefined;
  return async (batchPages) => {
    // No commit by age: the tests' fixed clocks do not move real time.
    const options = { batch: { pages: batchPages, ms: 3_600_000 } };
    let location: string;
    if (backend.kind === "sqlite") location = await backend.url();
    else {
      shared ??= await sharedDatabase(backend);
      location = shared.location;
      await empty(shared.sql);
    }
    const open = () => openBackendMirror(backend.kind, location, options);
    const mirror: CaseMirror = {
      store: await open(),
      async ids() {
        const rows = await all<{ id: string }>(mirror.store, shared?.sql, "SELECT id FROM bookings");
        return rows.map((r) => r.id).sort();
      },
      async quarantined() {
        const sql = "SELECT booking_id AS id FROM rejected_records WHERE booking_id IS NOT NULL";
        return (await all<{ id: string }>(mirror.store, shared?.sql, sql)).map((r) => r.id);
      },
      async crash() {
        const { store } = mirror;
        if (isSqlite(store)) {
          if (store.db.inTransaction) store.db.exec("ROLLBACK");
        } else await shared?.sql.query(KILL_WRITERS);
        await Promise.resolve(store.close()).catch(() => {});
        mirror.store = await open();
      },
      close: async () => {
        await mirror.store.close();
      },
    };
    return mirror;
  };
}

async function sharedDatabase(backend: Backend) {
  const location = await backend.url();
  // Created and migrated once; each case then empties it.
  await (await openBackendMirror(backend.kind, location)).close();
  // A client of its own, named apart from the store's connections, which `crash` ends.
  const sql = new pg.Client({ connectionString: location, application_name: "property-test" });
  // Ended by the suite dropping the database.
  sql.on("error", () => {});
  await sql.connect();
  return { location, sql };
}

/** Every table of the mirror emptied, ids restarted: as a new database, without creating one. */
async function empty(sql: pg.Client): Promise<void> {
  const { rows } = await sql.query<{ name: string }>(
    "SELECT tablename AS name FROM pg_tables WHERE schemaname = current_schema()",
  );
  const list = rows.map((t) => `"${t.name}"`).join(", ");
  if (list) await sql.query(`TRUNCATE ${list} RESTART IDENTITY CASCADE`);
}

/** Ends the store's connections, as the server does when their process dies: open work rolls back. */
const KILL_WRITERS = `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
  WHERE datname = current_database() AND application_name = 'booking-sync'`;

async function all<R extends pg.QueryResultRow>(store: Mirror, sql: pg.Client | undefined, text: string) {
  if (isSqlite(store)) return store.db.prepare(text).all() as R[];
  if (!sql) throw new Error("no SQL connection for a PostgreSQL mirror");
  return (await sql.query<R>(text)).rows;
}
