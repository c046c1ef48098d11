/**
 * Each database executes a page's statements (page-sql.ts) its own way: SQLite synchronously through
 * statements prepared once per connection, inside the batch's transaction; PostgreSQL one round trip
 * per statement, on the writer's connection.
 */
import type Database from "better-sqlite3";
import type { PageWrite, UpsertCounts } from "../../sync/ports.js";
import type { PersonalData } from "../personal-data.js";
import type { Query } from "../postgres/sql.js";
import { POSTGRES, SQLITE } from "./dialect.js";
import { toPageRows } from "./page-rows.js";
import { pageSql, type StoredRow } from "./page-sql.js";

/** Writes pages on the SQLite connection `db`; `runId` gives the run being recorded, if any. */
export function sqlitePageWriter(
  db: Database.Database,
  runId: () => number | null,
  personal?: PersonalData,
): (page: PageWrite) => UpsertCounts {
  const sql = pageSql(SQLITE);
  const prepared = new Map<string, Database.Statement>();
  const statement = (text: string) => {
    let s = prepared.get(text);
    if (s === undefined) {
      s = db.prepare(text);
      prepared.set(text, s);
    }
    return s;
  };
  return (page) => {
    const rows = toPageRows(page, personal);
    const read = sql.stored(rows);
    const stored = statement(read.sql).all(read.params) as StoredRow[];
    const [writes, counts] = sql.writes(rows, stored, runId());
    for (const w of writes) statement(w.sql).run(w.params);
    return counts;
  };
}

const postgresSql = pageSql(POSTGRES);

/** Writes a page through `query`, in the caller's transaction; `runId` is the run being recorded. */
export async function writePostgresPage(
  query: Query,
  page: PageWrite,
  runId: number | null,
  personal?: PersonalData,
): Promise<UpsertCounts> {
  const rows = toPageRows(page, personal);
  const read = postgresSql.stored(rows);
  const [writes, counts] = postgresSql.writes(rows, await query<StoredRow>(read.sql, read.params), runId);
  for (const w of writes) await query(w.sql, w.params);
  return counts;
}
