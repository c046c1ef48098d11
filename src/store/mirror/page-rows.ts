/**
 * A page as the values the statements bind: one row of positional values per booking (`_id`, booking
 * type, the view's columns in plan.ts's order, raw JSON, problems), with a personal-data policy
 * applied before anything is stored.
 */
import type { PageWrite, Reject } from "../../sync/ports.js";
import type { PersonalData } from "../personal-data.js";
import {
  bookingTypeOf,
  childValues,
  type KeyedBooking,
  keyedBookings,
  type Param,
  pushDetailValues,
  pushSummaryValues,
  quarantined,
} from "../rows.js";
import { FIRST } from "./plan.js";

type FeedWrite = Extract<PageWrite, { source: "feed" }>;
type DetailWrite = Extract<PageWrite, { source: "list" }>;

/** A feed page as the values the statements bind: a row per booking, laid out as plan.ts's `FEED` view. */
export type FeedRows = ReturnType<typeof toFeedRows>;
/** A list page as the values the statements bind. */
export type DetailRows = ReturnType<typeof toDetailRows>;
/**
 * A booking of `DetailRows`: its `bookings` values, laid out as plan.ts's `LIST` view, and its
 * `booking_packages` and `booking_items` rows, in `PACKAGE_COLUMNS` and `ITEM_COLUMNS` order.
 */
export type DetailRow = DetailRows["rows"][number];
export type PageRows = FeedRows | DetailRows;

/** The values of a booking: the view's columns pushed by `push`, the JSON under `personal`, problems. */
function values<T>(b: KeyedBooking<T>, type: Param, push: (out: Param[]) => void, personal?: PersonalData) {
  const row: Param[] = [b.id, type];
  push(row);
  if (personal) {
    personal.protectColumns(row, FIRST);
    row.push(personal.recordJson(b.raw));
  } else row.push(b.text ?? JSON.stringify(b.raw));
  row.push(b.problems);
  return row;
}

/** The rejects still to quarantine, personal fields replaced under `personal`. */
function rejectsOf(rejects: readonly Reject[], personal?: PersonalData): Reject[] {
  const kept = quarantined(rejects);
  return personal ? kept.map(personal.protectReject) : kept;
}

/** The values a page binds; a `personal` policy replaces personal fields in columns, JSON and rejects. */
export function toFeedRows(page: FeedWrite, personal?: PersonalData) {
  const type = page.bookingType ?? null;
  const rows = keyedBookings(page.records, page.rejects).map((b) =>
    values(b, type, (row) => pushSummaryValues(row, b.createdAt, b.record), personal),
  );
  const { progress, syncedAt } = page;
  return { source: "feed" as const, rows, rejects: rejectsOf(page.rejects, personal), progress, syncedAt };
}

/** The values a page binds; with a `personal` policy, its personal fields replaced as in `toFeedRows`. */
export function toDetailRows(page: DetailWrite, personal?: PersonalData) {
  const rows = keyedBookings(page.records, page.rejects).map((b) => {
    const push = (row: Param[]) => {
      pushSummaryValues(row, b.createdAt, b.record);
      pushDetailValues(row, b.createdAt, b.record);
    };
    return {
      values: values(b, bookingTypeOf(b.record.type), push, personal),
      ...childValues(b.id, b.record),
    };
  });
  const { syncedAt, progress, listedBy = null } = page;
  const rejects = rejectsOf(page.rejects, personal);
  return { source: "list" as const, rows, rejects, syncedAt, listedBy, progress };
}

/** The values any page binds, as `toFeedRows` or `toDetailRows` gives them. */
export function toPageRows(page: PageWrite, personal?: PersonalData): PageRows {
  return page.source === "feed" ? toFeedRows(page, personal) : toDetailRows(page, personal);
}
