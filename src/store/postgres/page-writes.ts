/**
 * A page's writes in Postgres: the stored rows of the page read in one query, compared here as the
 * SQLite writers compare them row by row, then one multi-row upsert. Only the lease holder syncs,
 * so nothing of the worker's changes between the read and the write (see lease.ts); the upsert
 * repeats the stale-write guard for any other session's write.
 */
import type { UpsertCounts } from "../../sync/ports.js";
import { countOfUpdate, trackedIn } from "../changes.js";
import type { DetailRow, DetailRows } from "../detail-writes.js";
import { type FeedRows, noCounts } from "../feed-writes.js";
import {
  DETAIL_COLUMNS,
  ITEM_COLUMNS,
  KEPT_IF_NULL,
  PACKAGE_COLUMNS,
  type Param,
  SUMMARY_COLUMNS,
  sameRecordJson,
} from "../rows.js";
import { insertRows, type Query } from "./sql.js";
import { type Change, changedFields, insertChanges, insertRejects, writeProgress } from "./state-writes.js";

// Positions in a row's values: `_id`, booking type, the columns, then the raw JSON.
const ID = 0;
const TYPE = 1;
const FIRST = 2;

type Stored = Record<string, unknown> & { json: string | null };

const FEED_TRACKED = trackedIn(SUMMARY_COLUMNS);
const FEED_JSON = FIRST + SUMMARY_COLUMNS.length;
const FEED_INSERT = `INSERT INTO bookings (id, booking_type, ${SUMMARY_COLUMNS.join(", ")}, summary_json,
  summary_problems, first_seen_at, summary_synced_at)`;
const FEED_CONFLICT = `ON CONFLICT (id) DO UPDATE SET ${SUMMARY_COLUMNS.map((c) =>
  KEPT_IF_NULL.has(c) ? `${c} = coalesce(excluded.${c}, bookings.${c})` : `${c} = excluded.${c}`,
).join(", ")},
  booking_type = coalesce(excluded.booking_type, bookings.booking_type),
  summary_json = excluded.summary_json, summary_problems = excluded.summary_problems,
  summary_synced_at = excluded.summary_synced_at, missing_since = NULL`;

/** Stores a feed page with its rejects and progress; counts as the SQLite writer does. */
export async function writeFeedPage(
  query: Query,
  part: FeedRows,
  runId: number | null,
): Promise<UpsertCounts> {
  const counts = noCounts();
  const columns = `summary_json AS json, booking_type AS "bookingType", missing_since AS "missingSince"`;
  const stored = await storedRows(query, columns, FEED_TRACKED, part.rows);
  const upserts = new Map<string, Param[]>();
  const touched = new Set<string>();
  const changes: Change[] = [];
  for (const row of part.rows) {
    const id = row[ID] as string;
    const json = row[FEED_JSON] as string;
    const before = stored.get(id);
    const after = { ...before, ...trackedValues(FEED_TRACKED, row), json, missingSince: null };
    if (before && sameRecordJson(before.json, json)) {
      counts.unchanged++;
      const learnsType = row[TYPE] !== null && before.bookingType !== row[TYPE];
      if (before.missingSince !== null || learnsType) touched.add(id);
      continue;
    }
    const changed = before
      ? changedFields(id, FEED_TRACKED, before, row, FIRST, part.syncedAt, row[FEED_JSON + 1] === null)
      : [];
    changes.push(...changed);
    counts[before ? countOfUpdate(before.json, changed.length) : "inserted"]++;
    upserts.set(id, row);
    stored.set(id, { ...after, bookingType: row[TYPE] ?? before?.bookingType ?? null });
  }
  const rows = [...upserts.values()].map((row) => [...row, part.syncedAt, part.syncedAt]);
  await insertRows(query, FEED_INSERT, rows, FEED_CONFLICT);
  const touch = [...touched].filter((id) => !upserts.has(id));
  const type = part.rows[0]?.[TYPE] ?? null;
  if (touch.length > 0)
    await query(
      "UPDATE bookings SET missing_since = NULL, booking_type = coalesce($2, booking_type) WHERE id = ANY($1)",
      [touch, type],
    );
  await insertChanges(query, changes, runId);
  counts.rejected = part.rejects.length;
  await insertRejects(query, part.rejects, "feed", null, part.syncedAt);
  if (part.progress) await writeProgress(query, part.progress, part.syncedAt);
  return counts;
}

const DETAIL_ALL = [...SUMMARY_COLUMNS, ...DETAIL_COLUMNS];
const DETAIL_TRACKED = trackedIn(DETAIL_ALL);
const DETAIL_JSON = FIRST + DETAIL_ALL.length;
const REMOTE = FIRST + DETAIL_ALL.indexOf("remote_updated_at");
// summary_json stays null for a new row: it holds only what the feed served.
const DETAIL_INSERT = `INSERT INTO bookings (id, booking_type, ${DETAIL_ALL.join(", ")}, detail_json,
  detail_problems, detail_synced_at, listed_by_run, first_seen_at, summary_synced_at)`;
const DETAIL_CONFLICT = `ON CONFLICT (id) DO UPDATE SET ${DETAIL_ALL.map((c) =>
  c === "created_at" ? `${c} = coalesce(excluded.${c}, bookings.${c})` : `${c} = excluded.${c}`,
).join(", ")},
  booking_type = coalesce(excluded.booking_type, bookings.booking_type), detail_json = excluded.detail_json,
  detail_problems = excluded.detail_problems, detail_synced_at = excluded.detail_synced_at,
  listed_by_run = coalesce(excluded.listed_by_run, bookings.listed_by_run), missing_since = NULL
  WHERE bookings.remote_updated_at IS NULL OR excluded.remote_updated_at IS NULL
    OR bookings.remote_updated_at <= excluded.remote_updated_at`;
// Unchanged or stale rows were still served: not missing. Details just confirmed current leave the
// details queue, or they would be re-read forever.
const DETAIL_TOUCH = `UPDATE bookings SET missing_since = NULL, listed_by_run = coalesce($2::integer, listed_by_run),
    detail_synced_at = CASE WHEN summary_synced_at > detail_synced_at THEN $3 ELSE detail_synced_at END
  WHERE id = ANY($1) AND (missing_since IS NOT NULL
    OR ($2::integer IS NOT NULL AND listed_by_run IS DISTINCT FROM $2::integer)
    OR summary_synced_at > detail_synced_at)`;

/** Stores a list page (rows, packages, items) with the stale-write guard, its rejects and progress. */
export async function writeDetailPage(
  query: Query,
  part: DetailRows,
  runId: number | null,
): Promise<UpsertCounts> {
  const counts = noCounts();
  const columns = `remote_updated_at AS remote, detail_json AS json`;
  const stored = await storedRows(
    query,
    columns,
    DETAIL_TRACKED,
    part.rows.map((r) => r.values),
  );
  const upserts = new Map<string, DetailRow>();
  const replaced = new Set<string>();
  const touched = new Set<string>();
  const changes: Change[] = [];
  for (const row of part.rows) {
    const { values } = row;
    const id = values[ID] as string;
    const json = values[DETAIL_JSON] as string;
    const remote = values[REMOTE] as string | null;
    const before = stored.get(id);
    // ISO 8601 UTC text compares in time order; a payload without updatedAt cannot be judged stale.
    const stale = before && typeof before.remote === "string" && remote !== null && before.remote > remote;
    if (before && (stale || sameRecordJson(before.json, json))) {
      counts.unchanged++;
      touched.add(id);
      continue;
    }
    if (before) {
      changes.push(
        ...changedFields(
          id,
          DETAIL_TRACKED,
          before,
          values,
          FIRST,
          part.syncedAt,
          values[DETAIL_JSON + 1] === null,
        ),
      );
      if (!upserts.has(id)) replaced.add(id);
    }
    counts[before ? "updated" : "inserted"]++;
    upserts.set(id, row);
    stored.set(id, { ...trackedValues(DETAIL_TRACKED, values), json, remote });
  }
  const { syncedAt, listedBy } = part;
  const rows = [...upserts.values()].map((r) => [...r.values, syncedAt, listedBy, syncedAt, syncedAt]);
  await insertRows(query, DETAIL_INSERT, rows, DETAIL_CONFLICT);
  await replaceChildren(query, [...replaced], [...upserts.values()]);
  const touch = [...touched].filter((id) => !upserts.has(id));
  if (touch.length > 0) await query(DETAIL_TOUCH, [touch, listedBy, syncedAt]);
  await insertChanges(query, changes, runId);
  counts.rejected = part.rejects.length;
  await insertRejects(query, part.rejects, "list", listedBy, syncedAt);
  if (part.progress) await writeProgress(query, part.progress, syncedAt);
  return counts;
}

/** Packages and items of the upserted bookings, replacing those of the ones already stored. */
async function replaceChildren(query: Query, replaced: string[], rows: DetailRow[]): Promise<void> {
  if (replaced.length > 0) {
    await query("DELETE FROM booking_items WHERE booking_id = ANY($1)", [replaced]);
    await query("DELETE FROM booking_packages WHERE booking_id = ANY($1)", [replaced]);
  }
  const packages = rows.flatMap((r) => r.packages);
  const items = rows.flatMap((r) => r.items);
  await insertRows(query, `INSERT INTO booking_packages (${PACKAGE_COLUMNS.join(", ")})`, packages);
  await insertRows(query, `INSERT INTO booking_items (${ITEM_COLUMNS.join(", ")})`, items);
}

/** The stored rows of the page's bookings, by id, with `columns` and the tracked columns. */
async function storedRows(
  query: Query,
  columns: string,
  tracked: ReturnType<typeof trackedIn>,
  rows: readonly Param[][],
): Promise<Map<string, Stored>> {
  const ids = [...new Set(rows.map((r) => r[ID] as string))];
  if (ids.length === 0) return new Map();
  const found = await query<Stored & { id: string }>(
    `SELECT id, ${columns}, ${tracked.map(([c]) => c).join(", ")} FROM bookings WHERE id = ANY($1)`,
    [ids],
  );
  return new Map(found.map((r) => [r.id, r]));
}

/** A row's tracked values by column, as `storedRows` would read them back. */
function trackedValues(
  tracked: ReturnType<typeof trackedIn>,
  values: readonly Param[],
): Record<string, Param> {
  return Object.fromEntries(tracked.map(([column, index]) => [column, values[FIRST + index] ?? null]));
}
