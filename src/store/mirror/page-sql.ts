/**
 * A page's statements, written once for both databases: the read of the stored rows the plan needs,
 * then the plan (plan.ts) as statements that each take the page's rows at once, so a statement's
 * fixed cost (in PostgreSQL, a round trip) is paid once a page, not once a row. Each view's SQL is
 * here as data: what it writes besides its columns, what a NULL keeps, how a served row is touched.
 */
import type { UpsertCounts } from "../../sync/ports.js";
import type { PersonalData } from "../personal-data.js";
import { ITEM_COLUMNS, KEPT_IF_NULL, PACKAGE_COLUMNS, type Param } from "../rows.js";
import type { Dialect } from "./dialect.js";
import type { DetailRow, DetailRows, FeedRows, PageRows } from "./page-rows.js";
import { FEED, ID, LIST, planPage, type Stored, TYPE, type View } from "./plan.js";
import { type Statement, Statements } from "./statements.js";

/** How a writer writes its pages: for which run, and whether it records booking events. */
export interface Writing {
  /** The run being recorded, for `booking_changes` and the events; null when none. */
  runId: number | null;
  /** Whether the page's events go to `booking_events` (`EVENTS_RETENTION_DAYS` > 0). */
  events: boolean;
  /** Hashes or drops personal fields before storing; none keeps them. */
  personal?: PersonalData | undefined;
}

/** A `bookings` row as the stored read returns it. */
export type StoredRow = Stored & { id: string };

/** What a view writes besides its columns, in SQL. */
interface ViewSql {
  /** The view's columns a NULL does not overwrite. */
  keptIfNull: ReadonlySet<string>;
  /** The columns after `_id`, the type, the view's columns, its JSON and problems. */
  extra: readonly string[];
  /** The values of `extra` for a page. */
  extraValues(page: PageRows): Param[];
  /** SET of the upsert, after the view's columns. */
  set: string;
  /** The upsert's guard, if any. */
  where: string;
  /** The touch statement's SQL and values, ids bound at `oneOf`'s `?`. */
  touch(d: Dialect): string;
  touchValues(page: PageRows, ids: unknown): unknown[];
}

const FEED_SQL: ViewSql = {
  keptIfNull: KEPT_IF_NULL,
  extra: ["summary_problems", "first_seen_at", "summary_synced_at"],
  extraValues: (p) => [p.syncedAt, p.syncedAt],
  // A changed summary shows the source serves the booking: its details are sought at once.
  set: `summary_json = excluded.summary_json, summary_problems = excluded.summary_problems,
    summary_synced_at = excluded.summary_synced_at, details_seek_after = NULL`,
  where: "",
  touch: (d) =>
    `UPDATE bookings SET missing_since = NULL, booking_type = coalesce(?, booking_type) WHERE ${d.oneOf("id")}`,
  touchValues: (p, ids) => [(p as FeedRows).rows[0]?.[TYPE] ?? null, ids],
};

// Of an unchanged or stale row: served, so not missing; details just confirmed current leave the
// details queue, or they would be re-read forever.
const LIST_SQL: ViewSql = {
  // A full record carries the sender email; only a createdAt that failed its check keeps the stored one.
  keptIfNull: new Set(["created_at"]),
  // summary_json stays null for a new row: it holds only what the feed served.
  extra: ["detail_problems", "detail_synced_at", "listed_by_run", "first_seen_at", "summary_synced_at"],
  extraValues: (p) => [p.syncedAt, (p as DetailRows).listedBy, p.syncedAt, p.syncedAt],
  set: `detail_json = excluded.detail_json, detail_problems = excluded.detail_problems,
    detail_synced_at = excluded.detail_synced_at,
    listed_by_run = coalesce(excluded.listed_by_run, bookings.listed_by_run),
    details_misses = NULL, details_seek_after = NULL`,
  // The plan refused stale rows; this repeats the guard for any other session's write.
  where: `WHERE bookings.remote_updated_at IS NULL OR excluded.remote_updated_at IS NULL
    OR bookings.remote_updated_at <= excluded.remote_updated_at`,
  touch: (d) => `UPDATE bookings SET missing_since = NULL,
      listed_by_run = coalesce(CAST(? AS integer), listed_by_run),
      detail_synced_at = CASE WHEN summary_synced_at > detail_synced_at THEN ? ELSE detail_synced_at END,
      details_misses = NULL, details_seek_after = NULL
    WHERE ${d.oneOf("id")} AND (missing_since IS NOT NULL
      OR (CAST(? AS integer) IS NOT NULL AND listed_by_run IS DISTINCT FROM CAST(? AS integer))
      OR summary_synced_at > detail_synced_at)`,
  touchValues: (p, ids) => {
    const { listedBy, syncedAt } = p as DetailRows;
    return [listedBy, syncedAt, ids, listedBy, listedBy];
  },
};

const viewOf = (page: PageRows): [View, ViewSql] =>
  page.source === "feed" ? [FEED, FEED_SQL] : [LIST, LIST_SQL];
const valuesOf = (page: PageRows) => (row: unknown) =>
  page.source === "feed" ? (row as Param[]) : (row as DetailRow).values;

/** A view's upsert, before and after its VALUES. */
function upsert(view: View, sql: ViewSql): readonly [string, string] {
  const columns = ["id", "booking_type", ...view.columns, view.jsonColumn, ...sql.extra];
  const set = view.columns.map((c) =>
    sql.keptIfNull.has(c) ? `${c} = coalesce(excluded.${c}, bookings.${c})` : `${c} = excluded.${c}`,
  );
  const tail = `ON CONFLICT (id) DO UPDATE SET ${set.join(", ")},
    booking_type = coalesce(excluded.booking_type, bookings.booking_type), ${sql.set}, missing_since = NULL
    ${sql.where}`;
  return [`INSERT INTO bookings (${columns.join(", ")})`, tail];
}

const UPSERTS = { feed: upsert(FEED, FEED_SQL), list: upsert(LIST, LIST_SQL) };

/** The statements of pages in dialect `d`. */
export function pageSql(d: Dialect) {
  const s = new Statements(d);
  return {
    /** Reads the stored rows of the page's ids, as `planPage` takes them. */
    stored(page: PageRows): Statement {
      const [view] = viewOf(page);
      const sql = s.text(`stored:${page.source}`, () => {
        const tracked = view.tracked.map(([c]) => c).join(", ");
        return `SELECT id, ${view.jsonColumn} AS json, booking_type AS "bookingType",
          missing_since AS "missingSince", remote_updated_at, ${tracked} FROM bookings WHERE ${d.oneOf("id")}`;
      });
      const ids = [...new Set(page.rows.map((r) => valuesOf(page)(r)[ID] as string))];
      return { sql, params: [d.list(ids)] };
    },

    /** Plans the page against its `stored` rows; the statements that write it, and its counts. */
    writes(page: PageRows, stored: readonly StoredRow[], o: Writing): [Statement[], UpsertCounts] {
      const { runId } = o;
      const [view, sql] = viewOf(page);
      const values = valuesOf(page);
      const byId = new Map(stored.map((r) => [r.id, r]));
      const plan = planPage<unknown>(view, page.rows, values, byId, page.syncedAt, o.events);
      const [head, tail] = UPSERTS[page.source];
      const rows = plan.writes.map(values);
      const out = s.inserts(`upsert:${page.source}`, head, rows, { tail, suffix: sql.extraValues(page) });
      if (page.source === "list") out.push(...children(s, plan.writes as DetailRow[], plan.replaced));
      out.push(...respell(s, view, plan.respelled));
      if (plan.touched.length > 0) {
        const touch = s.text(`touch:${page.source}`, () => sql.touch(d));
        out.push({ sql: touch, params: sql.touchValues(page, d.list(plan.touched)) });
      }
      out.push(...s.changes(plan.changes, runId));
      if (o.events) out.push(...s.events(plan.events, runId));
      const rejectsRun = page.source === "list" ? page.listedBy : null;
      out.push(...s.rejects(page.rejects, page.source, rejectsRun, page.syncedAt));
      if (page.progress) out.push(s.progress(page.progress, page.syncedAt));
      return [out, { ...plan.counts, rejected: page.rejects.length }];
    },
  };
}

/** The texts of records served again in another spelling, nothing else of their rows. */
function respell(s: Statements, view: View, rows: ReadonlyArray<readonly [string, string]>): Statement[] {
  const head = "WITH served (booking_id, served_json) AS (";
  const tail = `) UPDATE bookings SET ${view.jsonColumn} = served.served_json FROM served
    WHERE bookings.id = served.booking_id`;
  return s.inserts(`respell:${view.jsonColumn}`, head, rows, { tail });
}

/** Packages and items of the written bookings, replacing those of the ones stored before. */
function children(s: Statements, rows: DetailRow[], replaced: string[]): Statement[] {
  const out: Statement[] = [];
  if (replaced.length > 0)
    for (const table of ["booking_items", "booking_packages"]) {
      const sql = s.text(
        `delete:${table}`,
        () => `DELETE FROM ${table} WHERE ${s.dialect.oneOf("booking_id")}`,
      );
      out.push({ sql, params: [s.dialect.list(replaced)] });
    }
  const packages = rows.flatMap((r) => r.packages);
  out.push(
    ...s.inserts("packages", `INSERT INTO booking_packages (${PACKAGE_COLUMNS.join(", ")})`, packages),
  );
  const items = rows.flatMap((r) => r.items);
  out.push(...s.inserts("items", `INSERT INTO booking_items (${ITEM_COLUMNS.join(", ")})`, items));
  return out;
}
