/**
 * Each database executes the mirror's statements (page-sql.ts, unlisted.ts) its own way: SQLite
 * synchronously through statements prepared once per connection, inside the batch's transaction;
 * PostgreSQL one round trip per statement, on the writer's connection.
 */
import type Database from "better-sqlite3";
import type { PageWrite, UpsertCounts } from "../../sync/ports.js";
import type { Query } from "../postgres/sql.js";
import type { Ask } from "./ask.js";
import { POSTGRES, SQLITE } from "./dialect.js";
import { toPageRows } from "./page-rows.js";
import { pageSql, type StoredRow, type Writing } from "./page-sql.js";
import type { Statement } from "./statements.js";

/** Statements on one SQLite connection, each prepared at its first use. */
export type SqliteStatements = ReturnType<typeof sqliteStatements>;

export function sqliteStatements(db: Database.Database) {
  const prepared = new Map<string, Database.Statement>();
  const statement = (text: string) => {
    let s = prepared.get(text);
    if (s === undefined) {
      s = db.prepare(text);
      prepared.set(text, s);
    }
    return s;
  };
  const all = (s: Statement) => statement(s.sql).all(s.params) as Array<Record<string, unknown>>;
  return {
    all,
    run: (s: Statement) => void statement(s.sql).run(s.params),
    /** Answers `ask`; with `events`, writes the events its rows make in the same transaction. */
    ask<T>(ask: Ask<T>, events = false): T {
      const { events: of } = ask;
      if (!events || !of) return ask.answer(all(ask.statement));
      return db.transaction(() => {
        const rows = all(ask.statement);
        for (const s of of(rows)) statement(s.sql).run(s.params);
        return ask.answer(rows);
      })();
    },
  };
}

const sqliteSql = pageSql(SQLITE);
const postgresSql = pageSql(POSTGRES);

/** Writes a page on SQLite, in the caller's transaction, as `o` says. */
export function writeSqlitePage(statements: SqliteStatements, page: PageWrite, o: Writing): UpsertCounts {
  const rows = toPageRows(page, o.personal);
  const stored = statements.all(sqliteSql.stored(rows)) as StoredRow[];
  const [writes, counts] = sqliteSql.writes(rows, stored, o);
  for (const w of writes) statements.run(w);
  return counts;
}

/** Writes a page through `query`, in the caller's transaction, as `o` says. */
export async function writePostgresPage(query: Query, page: PageWrite, o: Writing): Promise<UpsertCounts> {
  const rows = toPageRows(page, o.personal);
  const read = postgresSql.stored(rows);
  const [writes, counts] = postgresSql.writes(rows, await query<StoredRow>(read.sql, read.params), o);
  for (const w of writes) await query(w.sql, w.params);
  return counts;
}

/** Answers `ask` through `query`; with `events`, writes the events its rows make in one transaction. */
export async function askPostgres<T>(query: Query, ask: Ask<T>, events = false): Promise<T> {
  const { events: of } = ask;
  if (!events || !of) return ask.answer(await query(ask.statement.sql, ask.statement.params));
  await query("BEGIN");
  try {
    const rows = await query(ask.statement.sql, ask.statement.params);
    for (const s of of(rows)) await query(s.sql, s.params);
    await query("COMMIT");
    return ask.answer(rows);
  } catch (err) {
    await query("ROLLBACK").catch(() => {});
    throw err;
  }
}
