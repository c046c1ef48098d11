/**
 * The mirror as the status reads see it, whichever database keeps it: statements with `$1, $2…`
 * placeholders inside one read snapshot, so every figure of one status comes from the same moment.
 * SQLite's snapshot is here; PostgreSQL's is postgres/snapshot.ts.
 */
import { statSync } from "node:fs";
import type Database from "better-sqlite3";

/** Where the mirror is and the room it takes. */
export interface DatabaseStatus {
  /** The SQLite file's path, or the PostgreSQL URL without its password. */
  path: string;
  /** Size of the database file (0 when there is none, e.g. in memory), or of the PostgreSQL database, bytes. */
  bytes: number;
  /** Size of SQLite's -wal file, bytes: pages written since the last checkpoint (0 when absent; 0 in PostgreSQL). */
  walBytes: number;
  /** Which database keeps the mirror. */
  backend: "sqlite" | "postgres";
}

/** Reads inside one snapshot of the mirror; the same SQL runs on either database. */
export interface MirrorReader {
  /** Runs one statement with `$1, $2…` placeholders and returns its rows. */
  all<R>(sql: string, params?: readonly unknown[]): Promise<R[]>;
  /** Where the mirror is and its size, as of the snapshot. */
  database(): Promise<DatabaseStatus>;
}

/** Runs `read` inside one snapshot and ends it, whether `read` succeeds or throws. */
export type Snapshot = <T>(read: (db: MirrorReader) => Promise<T>) => Promise<T>;

/**
 * Snapshots taken one after another, since a connection holds one transaction at a time and two page
 * views may overlap: `begin` opens one and gives its reader and how to end it, whatever `read` did.
 */
export function serialSnapshot(begin: () => Promise<[MirrorReader, () => unknown]>): Snapshot {
  let tail: Promise<unknown> = Promise.resolve();
  return <T>(read: (db: MirrorReader) => Promise<T>): Promise<T> => {
    const run = tail.then(async () => {
      const [reader, end] = await begin();
      try {
        return await read(reader);
      } finally {
        await end();
      }
    });
    tail = run.catch(() => {});
    return run;
  };
}

/**
 * Snapshots on the SQLite connection `db` (the file at `path`), a read transaction each. `db` must
 * not be the connection that writes, whose batch may hold a transaction open.
 */
export function sqliteSnapshot(db: Database.Database, path: string): Snapshot {
  const reader: MirrorReader = {
    all: async <R>(sql: string, params: readonly unknown[] = []) => sqliteAll<R>(db, sql, params),
    database: async () => sqliteDatabase(path),
  };
  return serialSnapshot(async () => {
    // Deferred: the snapshot is taken at the first read and holds until COMMIT.
    db.exec("BEGIN");
    return [reader, () => db.inTransaction && db.exec("COMMIT")];
  });
}

/** Runs one statement with `$1, $2…` placeholders on `db`, at once; its rows, none if it returns none. */
export function sqliteAll<R>(db: Database.Database, sql: string, params: readonly unknown[] = []): R[] {
  // `$n` is `?n` in SQLite; better-sqlite3 binds numbered parameters from an object keyed "1", "2"…
  const statement = db.prepare(sql.replace(/\$(\d+)/g, "?$1"));
  const bound = params.length
    ? statement.bind(Object.fromEntries(params.map((v, i) => [i + 1, v])))
    : statement;
  // A statement that returns no rows (a SAVEPOINT) is run, as PostgreSQL runs it.
  if (!statement.reader) {
    bound.run();
    return [];
  }
  return bound.all() as R[];
}

/** The SQLite file at `path` and its -wal, as `MirrorReader.database` reports them. */
export function sqliteDatabase(path: string): DatabaseStatus {
  return { path, bytes: fileBytes(path), walBytes: fileBytes(`${path}-wal`), backend: "sqlite" };
}

function fileBytes(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}
