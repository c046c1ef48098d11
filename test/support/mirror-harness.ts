/**
 * The harness for either backend (`Backend` of test/support/postgres.ts): the simulator and the real
 * client as harness.ts wires them, the mirror through `openMirror` as the CLI opens it, and SQL on
 * what the mirror committed, through a connection of the test's own.
 */
import Database from "better-sqlite3";
import { systemClock } from "../../src/app.js";
import type { Database as MirrorDatabase } from "../../src/config/config.js";
import type { Simulator } from "../../src/simulator/index.js";
import type { OpenOptions } from "../../src/store/open.js";
import { openMirror } from "../../src/store/open-mirror.js";
import { createPool } from "../../src/store/postgres/connect.js";
import type { Mirror } from "../../src/store/store.js";
import type { SyncDeps } from "../../src/sync/ports.js";
import { runSync, type SyncOptions } from "../../src/sync/run-sync.js";
import { memoryLogger } from "./fakes.js";
import {
  analyst,
  type CliResult,
  type HarnessOptions,
  runNode,
  servedIds,
  simulatedSource,
} from "./harness.js";
import type { Backend, BackendKind } from "./postgres.js";

/** Runs one statement with `$1, $2…` placeholders (on both backends) and returns its rows. */
export type Query = <R = Record<string, unknown>>(sql: string, params?: readonly unknown[]) => Promise<R[]>;

/** SQL beside the store, on a connection of its own: it sees what the store committed, nothing else. */
export interface MirrorSql {
  query: Query;
  /** A write outside the store, committed at once: a test's setup (an analyst's UPDATE, labels). */
  execute(sql: string, params?: readonly unknown[]): Promise<void>;
  close(): Promise<void>;
}

/** The mirror at `location` (what `Backend.url()` gave) as the config names it. */
export function mirrorDatabase(kind: BackendKind, location: string): MirrorDatabase {
  return kind === "sqlite"
    ? { kind: "sqlite", path: location }
    : { kind: "postgres", url: location, password: undefined };
}

/** Opens (creating and migrating) the mirror at `location` through `openMirror`. */
export function openBackendMirror(
  kind: BackendKind,
  location: string,
  options: OpenOptions = {},
): Promise<Mirror> {
  return openMirror(mirrorDatabase(kind, location), options);
}

/**
 * SQL on the mirror at `location`, which must exist (open the mirror first). SQLite reads through a
 * read-only connection, as an analyst would; Postgres through a pool that parses int8 and numeric
 * to numbers as the store's does, so `count(*)` is a number on both.
 */
export function mirrorSql(kind: BackendKind, location: string): MirrorSql {
  if (kind === "postgres") {
    const pool = createPool(location, { max: 2 });
    // pool.end() resolves before its connections have closed: a database dropped right after
    // terminates them, which the pool would throw as an idle connection's error.
    pool.on("error", () => {});
    return {
      query: async <R>(sql: string, params: readonly unknown[] = []) =>
        (await pool.query(sql, [...params])).rows as R[],
      execute: async (sql, params = []) => void (await pool.query(sql, [...params])),
      close: () => pool.end(),
    };
  }
  const reader = analyst(location);
  return {
    query: async <R>(sql: string, params: readonly unknown[] = []) =>
      inSqlite(reader, sql, params).all() as R[],
    async execute(sql, params = []) {
      // A connection of its own, as an analyst's would be; it waits for an open batch to commit.
      const writer = new Database(location, { fileMustExist: true, timeout: 5_000 });
      try {
        const statement = inSqlite(writer, sql, params);
        statement.reader ? statement.all() : statement.run();
      } finally {
        writer.close();
      }
    },
    async close() {
      reader.close();
    },
  };
}

/**
 * A statement with `$n` placeholders turned into SQLite's `?n`, its values bound by number (which
 * better-sqlite3 takes as an object keyed `1`, `2`…, so a value may be used more than once).
 */
function inSqlite(db: Database.Database, sql: string, params: readonly unknown[]) {
  const statement = db.prepare(sql.replace(/\$(\d+)/g, "?$1"));
  if (params.length === 0) return statement;
  return statement.bind(Object.fromEntries(params.map((v, i) => [String(i + 1), v])));
}

export interface MirrorHarness {
  kind: BackendKind;
  sim: Simulator;
  mirror: Mirror;
  logger: ReturnType<typeof memoryLogger>;
  /** SQL on what the mirror committed (see `mirrorSql`). */
  query: Query;
  execute: MirrorSql["execute"];
  /** The core's world: the real client to the simulator, the mirror, the system clock. */
  deps(): SyncDeps<Mirror>;
  sync(options?: Partial<SyncOptions>): ReturnType<typeof runSync>;
  /** Ids the mirror committed, sorted. */
  mirrorIds(): Promise<string[]>;
  /** Ids the simulator serves (optionally one booking type), sorted the same way. */
  sourceIds(bookingType?: "IN" | "LC"): string[];
  /** Closes the SQL connection, the mirror and the simulator; `Backend` removes the database. */
  close(): Promise<void>;
}

/** The simulator and a fresh mirror on `backend`, as harness.ts wires them for SQLite. */
export async function mirrorHarness(
  backend: Backend,
  options: HarnessOptions & Pick<OpenOptions, "batch"> = {},
): Promise<MirrorHarness> {
  const logger = memoryLogger();
  const { sim, api } = await simulatedSource(options, logger);
  let mirror: Mirror;
  let sql: MirrorSql;
  try {
    const location = await backend.url();
    mirror = await openBackendMirror(backend.kind, location, { batch: options.batch });
    sql = mirrorSql(backend.kind, location);
  } catch (err) {
    await sim.close();
    throw err;
  }
  const deps = (): SyncDeps<Mirror> => ({
    api,
    store: mirror,
    clock: systemClock,
    logger,
    signal: new AbortController().signal,
  });
  const pageSize = options.pageSize ?? 100;
  return {
    kind: backend.kind,
    sim,
    mirror,
    logger,
    query: sql.query,
    execute: sql.execute,
    deps,
    sync: (o = {}) => runSync(deps(), { pageSize, lookbackSeconds: 600, ...o }),
    mirrorIds: async () =>
      (await sql.query<{ id: string }>("SELECT id FROM bookings ORDER BY id")).map((r) => r.id),
    sourceIds: (bookingType) => servedIds(sim, bookingType),
    async close() {
      try {
        await sql.close();
        await mirror.close();
      } finally {
        await sim.close();
      }
    },
  };
}

/**
 * Runs an ES module `script` in another Node process (with tsx, so it may import the sources), for
 * what one process cannot show: a second writer, or a writer killed mid-batch.
 */
export function runScript(script: string): Promise<CliResult> {
  return runNode(["--import", "tsx", "--input-type=module", "-e", script]);
}
