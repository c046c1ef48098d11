/**
 * The mirror's one rule for a page: given its rows and what the mirror holds of their ids, which rows
 * to write, which to touch, which changes to record and how the page counts. Pure, so SQLite and
 * PostgreSQL cannot decide differently: each only executes the plan (page-sql.ts). Rows are judged
 * in page order against the mirror as the earlier rows of the page left it, so a second copy of an
 * `_id` is compared with the first.
 */
import type { UpsertCounts } from "../../sync/ports.js";
import { changedColumns, countOfUpdate, trackedIn } from "../changes.js";
import { DETAIL_COLUMNS, type Param, SUMMARY_COLUMNS, sameRecordJson } from "../rows.js";
import { type EventRow, type EventType, eventRow, summaryOf } from "./events.js";

/** What the mirror holds of a booking, as a page's plan needs it (tracked columns by name). */
export interface Stored extends Record<string, unknown> {
  /** The JSON this view stored (`summary_json` or `detail_json`); null when it never did. */
  json: string | null;
  bookingType: string | null;
  missingSince: string | null;
  remote_updated_at: string | null;
}

/** A row of `booking_changes` without its run: booking, field, old and new value, when observed. */
export type Change = [
  bookingId: string,
  field: string,
  oldValue: string | null,
  newValue: string | null,
  at: string,
];

/** How one endpoint's rows are laid out and judged. */
export interface View {
  /** The columns after `_id` and the booking type, in the order a row's values hold them. */
  columns: readonly string[];
  /** The `bookings` column that keeps this view's JSON. */
  jsonColumn: "summary_json" | "detail_json";
  /** Tracked columns and `remote_updated_at` (when the view has it), with their index in `columns`. */
  kept: ReturnType<typeof trackedIn>;
  tracked: ReturnType<typeof trackedIn>;
  /** Index of `remote_updated_at` in `columns`; undefined when the view has no stale-write guard. */
  remote: number | undefined;
  /** Whether an unchanged row stored before must still be touched (its marks refreshed). */
  touches(before: Stored, type: Param): boolean;
  /** How an overwrite of a stored booking counts, given how many tracked values changed. */
  countOf(before: Stored, changes: number): "updated" | "unchanged";
}

/** Positions in a row's values: `_id`, booking type, the view's columns, raw JSON, problems. */
export const ID = 0;
export const TYPE = 1;
export const FIRST = 2;

function view(columns: readonly string[], rest: Omit<View, "columns" | "kept" | "tracked" | "remote">): View {
  const tracked = trackedIn(columns);
  const remote = columns.indexOf("remote_updated_at");
  const kept = remote < 0 ? tracked : [...tracked, ["remote_updated_at", remote] as const];
  return { columns, tracked, kept, remote: remote < 0 ? undefined : remote, ...rest };
}

/** The feed's summaries. */
export const FEED: View = view(SUMMARY_COLUMNS, {
  jsonColumn: "summary_json",
  // An unchanged summary still teaches the booking type of a type-scoped stream, and that it is back.
  touches: (before, type) => before.missingSince !== null || (type !== null && before.bookingType !== type),
  countOf: (before, changes) => countOfUpdate(before.json, changes),
});

/** list-bookings' full records. */
export const LIST: View = view([...SUMMARY_COLUMNS, ...DETAIL_COLUMNS], {
  jsonColumn: "detail_json",
  // Whether the touch changes anything (missing, listed by another run, details behind the summary)
  // is for its statement to judge: the plan does not read those columns.
  touches: () => true,
  countOf: () => "updated",
});

/** What a page does to the mirror. */
export type Plan<R> = ReturnType<typeof planPage<R>>;

/**
 * Plans a page of `rows` (their values through `valuesOf`, laid out as `view` says) against `stored`,
 * the mirror's rows of the page's ids; `at` is when the page was read. Without `recording`, no
 * event is built (`events` stays empty): a mirror that keeps none does not pay for them.
 */
export function planPage<R>(
  view: View,
  rows: readonly R[],
  valuesOf: (row: R) => readonly Param[],
  stored: ReadonlyMap<string, Stored>,
  at: string,
  recording = true,
) {
  const known = new Map(stored);
  const writes = new Map<string, R>();
  const touched = new Set<string>();
  const respelled = new Map<string, string>();
  const changes: Change[] = [];
  const events: EventRow[] = [];
  const counts: UpsertCounts = { inserted: 0, updated: 0, unchanged: 0, rejected: 0 };
  const jsonAt = FIRST + view.columns.length;
  for (const row of rows) {
    const values = valuesOf(row);
    const id = values[ID] as string;
    const type = (values[TYPE] ?? null) as string | null;
    const json = values[jsonAt] as string;
    const before = known.get(id);
    const older = before !== undefined && stale(view, before, values);
    const event = (kind: EventType, changed?: Array<[string, string | null, string | null]>) => {
      if (!recording) return;
      // A stale row is not written: the event tells what the mirror keeps, where the plan knows it.
      const value = (column: string, i: number) =>
        older && column in before ? before[column] : values[FIRST + i];
      events.push(eventRow(kind, id, at, summaryOf(type ?? before?.bookingType, value), changed));
    };
    if (before?.missingSince) event("booking.back");
    if (before && (older || sameRecordJson(before.json, json))) {
      counts.unchanged++;
      // The same record spelt otherwise (or as an earlier release stored it): its text follows the source's.
      const respell = !older && before.json !== json;
      if (respell) respelled.set(id, json);
      if (view.touches(before, type)) touched.add(id);
      const kept = respell ? json : before.json;
      known.set(id, { ...before, json: kept, missingSince: null, bookingType: type ?? before.bookingType });
      continue;
    }
    const clean = values[jsonAt + 1] === null;
    const changed = before ? changedColumns(view.tracked, before, values, FIRST, clean) : [];
    for (const [field, old, now] of changed) changes.push([id, field, old, now, at]);
    if (!before) event("booking.created");
    else if (changed.length > 0) event("booking.changed", changed);
    counts[before ? view.countOf(before, changed.length) : "inserted"]++;
    writes.set(id, row);
    const after: Stored = { remote_updated_at: null, ...before, json, missingSince: null, bookingType: type };
    for (const [column, index] of view.kept) after[column] = values[FIRST + index] ?? null;
    after.bookingType = type ?? before?.bookingType ?? null;
    known.set(id, after);
  }
  return {
    /** Rows to insert or overwrite: for each `_id`, the last copy the rules let through. */
    writes: [...writes.values()],
    /** Ids of `writes` stored before the page: their packages and items are replaced. */
    replaced: [...writes.keys()].filter((id) => stored.has(id)),
    /** Ids stored, served unchanged (or stale) and not written: marks to refresh. */
    touched: [...touched].filter((id) => !writes.has(id)),
    /** Ids and texts of records served unchanged in another spelling and not written: the text alone is stored. */
    respelled: [...respelled].filter(([id]) => !writes.has(id)),
    changes,
    /** The events stream's rows, from the same comparison as `changes`. */
    events,
    /** How the page counts; `rejected` is left 0 for the caller. */
    counts,
  };
}

/**
 * Whether the stored copy is newer than the row's: ISO 8601 UTC text compares in time order; a
 * payload without updatedAt cannot be judged stale.
 */
function stale(view: View, before: Stored, values: readonly Param[]): boolean {
  if (view.remote === undefined) return false;
  const remote = values[FIRST + view.remote] ?? null;
  return before.remote_updated_at !== null && remote !== null && before.remote_updated_at > String(remote);
}
