/**
 * The walk's decision after each page, as a pure function so its edge cases can be tested in a table.
 *
 * The contract does not say whether the feed's cursor is exclusive (`createdAt < cursor`) or
 * inclusive (`<=`). So the walk keeps its own position, `upTo`: every booking created at or before
 * `upTo` may still be unread. It asks with `cursor = upTo + 1 ms` (exclusive: `<= upTo`) or, once
 * the server has shown it is inclusive, `cursor = upTo` (also `<= upTo`). Either way the next page
 * re-reads the bookings that share the oldest timestamp of the previous page, so a tie run split
 * across a page boundary is never skipped; seeing a booking twice is harmless (keyed by `_id`).
 */

export const MS = 1;

/** The cursor to send for a walk position; undefined asks for the newest page. */
export function cursorFor(upTo: string | null, inclusive: boolean | null): string | undefined {
  if (upTo === null) return undefined;
  return inclusive ? upTo : shift(upTo, MS);
}

export interface PageFacts {
  /** The cursor that was sent (undefined for the newest page). */
  sentCursor: string | undefined;
  /** The walk position the request was made for. */
  upTo: string | null;
  /** Requested page size. */
  limit: number;
  /** Normalised createdAt of each record that had one (valid or not), in page order. */
  times: string[];
  /** Records on the page, including ones without a usable createdAt. */
  count: number;
  hasMore: boolean;
  /** The server's nextCursor, used only when no record carries a usable time. */
  nextCursor: string | null;
  /** The walk stops once a page reaches below this time; null walks to the end. */
  floor: string | null;
}

export type Step =
  /** The walk is complete. */
  | { kind: "done"; reason: "empty" | "end" | "floor"; warn?: string }
  /** Read on from `upTo`. */
  | { kind: "next"; upTo: string; inclusive?: boolean }
  /** Ask again for the same position with an inclusive cursor: the server showed it is `<=`. */
  | { kind: "retry-inclusive" }
  /** A full page of one timestamp: the feed cannot page within it. Step past it, logged. */
  | { kind: "tie-overflow"; at: string; upTo: string }
  /** The server answered outside the window it was asked for; continuing could loop. */
  | { kind: "stuck"; message: string };

/** Decides what follows a page. Pure: same facts, same step. */
export function nextStep(f: PageFacts): Step {
  if (f.count === 0) {
    return f.hasMore
      ? {
          kind: "done",
          reason: "empty",
          warn: "empty page with hasMore=true; treating it as the end of the feed",
        }
      : { kind: "done", reason: "empty" };
  }
  const full = f.count >= f.limit;
  // A short page with hasMore=false exhausted the window. A full one may end inside a tie run the
  // server itself cannot reach with an exclusive cursor, so it is followed by one more request.
  if (!full && !f.hasMore) return { kind: "done", reason: "end" };

  const oldest = f.times.length ? minOf(f.times) : f.nextCursor;
  if (oldest === null) return { kind: "stuck", message: "page has no usable createdAt and no nextCursor" };
  if (f.floor !== null && oldest < f.floor) return { kind: "done", reason: "floor" };
  // A booking exactly at the cursor we sent proves the server's cursor is inclusive.
  const sawInclusive = f.sentCursor !== undefined && f.times.includes(f.sentCursor);
  if (f.upTo === null || oldest < f.upTo) {
    return sawInclusive ? { kind: "next", upTo: oldest, inclusive: true } : { kind: "next", upTo: oldest };
  }

  // No record older than upTo: the page is at (or above) the position we asked for.
  if (sawInclusive && f.sentCursor !== f.upTo) return { kind: "retry-inclusive" };
  if (f.times.every((t) => t === f.upTo)) {
    const past = shift(f.upTo, -MS);
    if (full) return { kind: "tie-overflow", at: f.upTo, upTo: past };
    return { kind: "next", upTo: past };
  }
  return {
    kind: "stuck",
    message: `feed answered cursor ${f.sentCursor} with bookings from ${oldest}, none older than ${f.upTo}`,
  };
}

/** An ISO time moved by `ms` milliseconds. */
export function shift(iso: string, ms: number): string {
  return new Date(Date.parse(iso) + ms).toISOString();
}

/** Smallest of ISO strings (text order is time order for normalised times). */
export function minOf(times: readonly string[]): string {
  let m = times[0] as string;
  for (const t of times) if (t < m) m = t;
  return m;
}

/** Largest of ISO strings, or null for none. */
export function maxOf(times: readonly string[]): string | null {
  let m: string | null = null;
  for (const t of times) if (m === null || t > m) m = t;
  return m;
}
