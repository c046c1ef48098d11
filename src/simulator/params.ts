/**
 * Query validation of the two endpoints: strict (a 400 naming the parameter) so a client sending bad
 * values is caught. Empty filters (`?bookingType=`) count as absent, as `if (req.query.x)` would.
 */
import type { SimBookingType } from "./catalog.js";

/** Largest `limit` and `pageSize` the API accepts (contract section 8). */
export const MAX_PAGE = 100;
/** `limit` and `pageSize` when not given. */
export const DEFAULT_PAGE = 10;

export type Parsed<T> = { ok: true; value: T } | { ok: false; message: string };

export interface FeedParams {
  limit: number;
  /** The cursor as sent, echoed by the stuck-cursor fault. */
  cursor?: string;
  /** The cursor as epoch milliseconds. */
  cursorMs?: number;
  bookingType?: SimBookingType;
}

export interface ListParams {
  page: number;
  pageSize: number;
  sourcePlatform?: string;
}

const invalid = (name: string, rule: string): { ok: false; message: string } => ({
  ok: false,
  message: `Invalid query parameter '${name}': ${rule}`,
});

/** A whole number from `min` to `max`, or `fallback` when the parameter is absent. */
function intParam(
  query: URLSearchParams,
  name: string,
  fallback: number,
  min: number,
  max = Number.MAX_SAFE_INTEGER,
): Parsed<number> {
  const raw = query.get(name);
  if (raw === null) return { ok: true, value: fallback };
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(value) || value < min || value > max) {
    const range =
      max === Number.MAX_SAFE_INTEGER ? `an integer >= ${min}` : `an integer from ${min} to ${max}`;
    return invalid(name, `must be ${range}, got "${raw}"`);
  }
  return { ok: true, value };
}

/** Parses fetch-recent-bookings' `limit`, `cursor` and `bookingType`. */
export function parseFeedParams(query: URLSearchParams): Parsed<FeedParams> {
  const limit = intParam(query, "limit", DEFAULT_PAGE, 1, MAX_PAGE);
  if (!limit.ok) return limit;
  const value: FeedParams = { limit: limit.value };
  const cursor = query.get("cursor");
  if (cursor) {
    const ms = Date.parse(cursor);
    if (!/^\d{4}-\d{2}-\d{2}T/.test(cursor) || Number.isNaN(ms)) {
      return invalid("cursor", `must be an ISO 8601 timestamp, got "${cursor}"`);
    }
    value.cursor = cursor;
    value.cursorMs = ms;
  }
  const bookingType = query.get("bookingType");
  if (bookingType) {
    if (bookingType !== "IN" && bookingType !== "LC") {
      return invalid("bookingType", `must be IN or LC, got "${bookingType}"`);
    }
    value.bookingType = bookingType;
  }
  return { ok: true, value };
}

/** Parses list-bookings' `page`, `pageSize` and `sourcePlatform`. */
export function parseListParams(query: URLSearchParams): Parsed<ListParams> {
  const page = intParam(query, "page", 1, 1);
  if (!page.ok) return page;
  const pageSize = intParam(query, "pageSize", DEFAULT_PAGE, 1, MAX_PAGE);
  if (!pageSize.ok) return pageSize;
  const value: ListParams = { page: page.value, pageSize: pageSize.value };
  const sourcePlatform = query.get("sourcePlatform");
  if (sourcePlatform) value.sourcePlatform = sourcePlatform;
  return { ok: true, value };
}
