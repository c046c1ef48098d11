/**
 * The PostgreSQL schema against SQLite's, on the run's throwaway server: migrations apply once even
 * when two workers start together, the tables, columns, keys, indexes and views carry SQLite's names,
 * and every view gives the same rows for the same data.
 */
import fs from "node:fs";
import type Database from "better-sqlite3";
import fc from "fast-check";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postgresUrl } from "../src/config/transport.js";
import { openStore, type Store } from "../src/store/index.js";
import { createPool, redactUrl } from "../src/store/postgres/connect.js";
import { migratePostgres } from "../src/store/postgres/migrate.js";
import { type FreshDatabase, freshPostgresDatabase, postgresAvailable } from "./support/postgres.js";
import { tempDir } from "./support/store-fixtures.js";
import { VIEW_ROWS } from "./support/view-rows.js";

const JOURNAL = JSON.parse(fs.readFileSync("drizzle/postgres/meta/_journal.json", "utf8")) as {
  entries: unknown[];
};
const VIEWS = ["bookings_v", "daily_bookings_v", "items_v", "sync_health_v"];

/** A logger that keeps what was said at info level. */
function infoLog() {
  const said: Array<{ obj: object; msg: string | undefined }> = [];
  const none = () => {};
  return {
    said,
    logger: {
      debug: none,
      warn: none,
      error: none,
      info: (obj: object, msg?: string) => said.push({ obj, msg }),
    },
  };
}

async function appliedCount(pool: pg.Pool): Promise<number> {
  const { rows } = await pool.query<{ n: number }>("SELECT count(*) AS n FROM drizzle.__drizzle_migrations");
  return rows[0]?.n ?? -1;
}

/**
 * A pool that ignores its connections' errors: pool.end() resolves before they have closed, and
 * the database dropped right after terminates them, which the pool would throw.
 */
function quiet(pool: pg.Pool): pg.Pool {
  pool.on("error", () => {});
  return pool;
}

describe.skipIf(!postgresAvailable())("PostgreSQL migrations", () => {
  const opened: Array<{ db: FreshDatabase; pools: pg.Pool[] }> = [];
  afterAll(async () => {
    for (const { db, pools } of opened) {
      await Promise.all(pools.map((p) => p.end()));
      await db.drop();
    }
  });
  async function database(pools: number) {
    const db = await freshPostgresDatabase();
    const entry = { db, pools: Array.from({ length: pools }, () => quiet(createPool(db.url))) };
    opened.push(entry);
    return entry.pools;
  }

  it("migrates a fresh database, and a second run does nothing", async () => {
    const [pool] = (await database(1)) as [pg.Pool];
    const log = infoLog();
    await migratePostgres(pool, log.logger);
    await migratePostgres(pool, log.logger);
    const total = JOURNAL.entries.length;
    expect(log.said).toEqual([{ obj: { applied: total, total }, msg: "database migrated" }]);
    expect(await appliedCount(pool)).toBe(total);
  });

  it("applies each migration once when two workers start together", async () => {
    const [a, b] = (await database(2)) as [pg.Pool, pg.Pool];
    await Promise.all([migratePostgres(a), migratePostgres(b)]);
    expect(await appliedCount(a)).toBe(JOURNAL.entries.length);
  });
});

describe("PostgreSQL URLs", () => {
  it("recognises postgres: and postgresql: URLs, and hides passwords", () => {
    expect(postgresUrl("/data/bookings.db")).toBeUndefined();
    expect(postgresUrl("postgresql://db.internal/mirror")?.hostname).toBe("db.internal");
    expect(() => postgresUrl("postgres://u:pw@[nope")).toThrow(/does not parse/);
    expect(redactUrl("postgres://sync:s3cret@db:5432/mirror?password=again&sslmode=require")).toBe(
      "postgres://sync:***@db:5432/mirror?password=***&sslmode=require",
    );
    expect(redactUrl("postgres://sync:s3c@ret@[nope/mirror")).toBe("postgres://sync:***@[nope/mirror");
  });

  it("puts a password given apart into the URL the pool connects with, whatever its characters", async () => {
    const password = "p@ss:w%rd/ü#?";
    const pool = createPool("postgres://sync:old@db/mirror", { password });
    const url = new URL((pool.options as { connectionString: string }).connectionString);
    await pool.end();
    expect(decodeURIComponent(url.password)).toBe(password);
  });
});

describe.skipIf(!postgresAvailable())("PostgreSQL connections", () => {
  it("name the application, notice a dead peer within seconds, and read int8 as numbers", async () => {
    const db = await freshPostgresDatabase();
    const pool = quiet(createPool(db.url));
    try {
      const { rows } = await pool.query(
        `SELECT current_setting('application_name') AS app, count(*) AS n,
           (SELECT json_object_agg(name, setting) FROM pg_settings WHERE name LIKE 'tcp_keepalives_%'
             OR name = 'client_connection_check_interval') AS settings FROM pg_class WHERE false`,
      );
      expect(rows[0]).toEqual({
        app: "booking-sync",
        n: 0,
        settings: {
          tcp_keepalives_idle: "5",
          tcp_keepalives_interval: "2",
          tcp_keepalives_count: "3",
          client_connection_check_interval: "2000",
        },
      });
    } finally {
      await pool.end();
      await db.drop();
    }
  });
});

describe.skipIf(!postgresAvailable())("PostgreSQL schema beside SQLite's", () => {
  let tmp: ReturnType<typeof tempDir>;
  let store: Store;
  let sqlite: Database.Database;
  let fresh: FreshDatabase;
  let pool: pg.Pool;
  beforeAll(async () => {
    tmp = tempDir();
    store = openStore(tmp.file());
    sqlite = store.db;
    fresh = await freshPostgresDatabase();
    pool = quiet(createPool(fresh.url));
    await migratePostgres(pool);
  });
  afterAll(async () => {
    store?.close();
    tmp?.cleanup();
    await pool?.end();
    await fresh?.drop();
  });

  const sqliteAll = (sql: string, ...args: unknown[]) =>
    sqlite.prepare(sql).all(...args) as Record<string, unknown>[];
  const pgAll = async (sql: string, args: unknown[] = []) =>
    (await pool.query(sql, args)).rows as Record<string, unknown>[];

  /** Each table's or view's columns in order, with SQLite's declared type and primary-key position. */
  function sqliteColumns(type: "table" | "view") {
    const names = sqliteAll(
      "SELECT name FROM sqlite_master WHERE type = ? AND name NOT LIKE 'sqlite_%' AND name <> '__drizzle_migrations' ORDER BY name",
      type,
    ).map((r) => r.name as string);
    return Object.fromEntries(
      names.map((t) => [t, sqliteAll(`SELECT name, type, pk FROM pragma_table_info('${t}')`)]),
    );
  }

  async function pgColumns(type: "BASE TABLE" | "VIEW") {
    const rows = await pgAll(
      `SELECT c.table_name, c.column_name, c.data_type,
         coalesce((SELECT k.ordinal_position FROM information_schema.table_constraints t
           JOIN information_schema.key_column_usage k USING (constraint_schema, constraint_name)
           WHERE t.constraint_type = 'PRIMARY KEY' AND t.table_schema = 'public'
             AND t.table_name = c.table_name AND k.column_name = c.column_name), 0) AS pk
       FROM information_schema.columns c JOIN information_schema.tables t USING (table_schema, table_name)
       WHERE c.table_schema = 'public' AND t.table_type = $1 ORDER BY c.table_name, c.ordinal_position`,
      [type],
    );
    const tables: Record<string, Array<{ name: unknown; type: unknown; pk: unknown }>> = {};
    for (const r of rows) {
      const table = r.table_name as string;
      tables[table] = [...(tables[table] ?? []), { name: r.column_name, type: r.data_type, pk: r.pk }];
    }
    return tables;
  }

  /** The source's integers: as wide as SQLite's INTEGER in Postgres too (src/store/postgres/schema.ts). */
  const WIDE = new Set([
    "bookings.booking_state",
    "bookings.order_state",
    "bookings.number_of_packages",
    "bookings.customer_acceptance_state",
    "sync_runs.source_total",
    "sync_runs.local_total",
    "state_labels.code",
    // Event positions: a mirror's events may pass 2^31 in its life.
    "booking_events.id",
    "event_delivery.cursor",
    "event_delivery.message_first",
    "event_delivery.message_last",
    "event_delivery.message_replay",
    "event_replays.id",
    "event_replays.from_id",
    "event_replays.to_id",
    "event_replays.next_id",
  ]);

  it("has SQLite's tables, with the same columns in order, types and primary keys", async () => {
    const pgType: Record<string, string> = { TEXT: "text", INTEGER: "integer", REAL: "double precision" };
    const want = Object.fromEntries(
      Object.entries(sqliteColumns("table")).map(([t, cols]) => [
        t,
        cols.map((c) => ({
          name: c.name,
          type: WIDE.has(`${t}.${c.name}`) ? "bigint" : (pgType[c.type as string] ?? c.type),
          pk: c.pk,
        })),
      ]),
    );
    expect(Object.keys(want)).toHaveLength(13);
    expect(await pgColumns("BASE TABLE")).toEqual(want);
  });

  it("has SQLite's indexes, unique, check and foreign-key constraints", async () => {
    const indexes = sqliteAll(
      "SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL ORDER BY name",
    ).map((r) => r.name);
    // A primary key's index is named by each database its own way; the keys are compared above.
    const pgIndexes = await pgAll(
      `SELECT indexname AS name FROM pg_indexes WHERE schemaname = 'public' AND indexname NOT IN
         (SELECT conname FROM pg_constraint WHERE contype = 'p') ORDER BY indexname`,
    );
    expect(pgIndexes.map((r) => r.name)).toEqual(indexes);
    const partial = await pgAll(
      "SELECT indexdef FROM pg_indexes WHERE indexname = 'bookings_needing_details_idx'",
    );
    expect(partial[0]?.indexdef).toMatch(
      /WHERE \(+detail_synced_at IS NULL\)? OR \(?summary_synced_at > detail_synced_at/,
    );

    const tableSql = sqliteAll("SELECT sql FROM sqlite_master WHERE type = 'table'").map(
      (r) => r.sql as string,
    );
    const checks = tableSql.flatMap((sql) => [...sql.matchAll(/CONSTRAINT "(\w+)" CHECK/g)].map((m) => m[1]));
    const pgChecks = await pgAll(
      "SELECT conname FROM pg_constraint WHERE contype = 'c' AND connamespace = 'public'::regnamespace ORDER BY 1",
    );
    expect(checks).toEqual(["bookings_booking_type_check"]);
    expect(pgChecks.map((r) => r.conname)).toEqual(checks);

    const tables = Object.keys(sqliteColumns("table"));
    const keys = tables.flatMap((t) =>
      sqliteAll(
        `SELECT ? AS "table", "from", "table" AS "to", "to" AS "toColumn", on_delete AS "onDelete"
         FROM pragma_foreign_key_list(?)`,
        t,
        t,
      ),
    );
    const pgKeys = await pgAll(
      `SELECT c.conrelid::regclass::text AS "table", a.attname AS "from", c.confrelid::regclass::text AS "to",
         af.attname AS "toColumn",
         CASE c.confdeltype WHEN 'c' THEN 'CASCADE' WHEN 'n' THEN 'SET NULL' ELSE c.confdeltype::text END AS "onDelete"
       FROM pg_constraint c
       JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1]
       JOIN pg_attribute af ON af.attrelid = c.confrelid AND af.attnum = c.confkey[1]
       WHERE c.contype = 'f' AND c.connamespace = 'public'::regnamespace`,
    );
    const order = (rows: Record<string, unknown>[]) => rows.map((r) => JSON.stringify(r)).sort();
    expect(keys).toHaveLength(6);
    expect(order(pgKeys)).toEqual(order(keys));
  });

  it("has SQLite's four views, with the same columns in order", async () => {
    const names = (cols: Record<string, Array<Record<string, unknown>>>) =>
      Object.fromEntries(Object.entries(cols).map(([t, c]) => [t, c.map((x) => x.name)]));
    const want = names(sqliteColumns("view"));
    expect(Object.keys(want)).toEqual(VIEWS);
    expect(names(await pgColumns("VIEW"))).toEqual(want);
  });

  it("rounds money as SQLite's round() does, to the bit", async () => {
    // Halves that are not halves in binary (2.675 is 2.67499999...), and SQLite's 18- or 19-digit step.
    const tricky = [2.675, 1.005, 0.125, 0.285, 8.345, 1022259.995, -1190052686674.3855, 0.1 + 0.2];
    const edges = [-0.001, 0.005, 0.004999999999999999, 4503599627370495.5, 1e300, -1e-300, Infinity];
    const cases: Array<[number, number]> = [...tricky, ...edges].flatMap(
      (x) =>
        [
          [x, 2],
          [x, 3],
        ] as Array<[number, number]>,
    );
    const money = fc.integer({ min: -1e12, max: 1e12 }).map((n) => n / 1000);
    const wide = fc.double({ noNaN: true, noDefaultInfinity: true });
    cases.push(
      ...fc.sample(fc.tuple(fc.oneof(money, wide), fc.integer({ min: 1, max: 30 })), {
        numRuns: 3000,
        seed: 7,
      }),
    );
    const { rows } = await pool.query<{ r: number }>(
      "SELECT round_like_sqlite(x, d) AS r FROM unnest($1::float8[], $2::int[]) WITH ORDINALITY u(x, d, n) ORDER BY n",
      [cases.map((c) => c[0]), cases.map((c) => c[1])],
    );
    const round = sqlite.prepare("SELECT round(?, ?) AS r");
    const differ = cases.filter(([x, d], i) => !Object.is((round.get(x, d) as { r: number }).r, rows[i]?.r));
    expect(differ).toEqual([]);
  });

  it("gives the same rows from every view for the same data", async () => {
    for (const [table, rows] of Object.entries(VIEW_ROWS)) {
      for (const row of rows) {
        const cols = Object.keys(row);
        sqlite
          .prepare(`INSERT INTO ${table} (${cols}) VALUES (${cols.map(() => "?")})`)
          .run(...Object.values(row));
        await pool.query(
          `INSERT INTO ${table} (${cols}) VALUES (${cols.map((_, i) => `$${i + 1}`)})`,
          Object.values(row),
        );
      }
    }
    // Views have no order: both sides sorted alike, then compared value by value (0 is not -0).
    const sorted = (rows: Record<string, unknown>[]) =>
      rows
        .map((r) => ({ key: JSON.stringify(Object.values(r)), r }))
        .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
        .map((x) => x.r);
    for (const view of VIEWS) {
      const [lite, post] = [sqliteAll(`SELECT * FROM ${view}`), await pgAll(`SELECT * FROM ${view}`)];
      if (view === "sync_health_v") {
        // The one normalisation: the checkpoint's age is read a moment apart on each side, so it may
        // differ by a second; it is compared within 2 s, then SQLite's is taken for the rest.
        for (const row of post) {
          const mine = lite.find((r) => r.last_run_id === row.last_run_id);
          const [a, b] = [row.checkpoint_age_seconds, mine?.checkpoint_age_seconds];
          if (a !== null && typeof a === "number" && typeof b === "number") {
            expect(Math.abs(a - b)).toBeLessThanOrEqual(2);
            row.checkpoint_age_seconds = b;
          }
        }
      }
      expect(post.length, view).toBeGreaterThan(0);
      expect(sorted(post), view).toEqual(sorted(lite));
    }
  });
});
