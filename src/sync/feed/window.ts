/**
 * The feed walk's decision after each page, pure so its edge cases can be tested in a table. The
 * cursor is the next whole millisecond after `upTo`, so a `<` and a `<=` server both serve everything
 * at or before it; the next page must serve the anchor again, proving nothing lies between. Nothing
 * trusts `hasMore` where records disagree, nor `nextCursor` at all.
 */

/** Bookings at one instant that a following page must serve again. */
export interface Anchor {
  /** The instant (nine fraction digits). */
  at: string;
  /** Some of the `_id`s seen at it (a page's worth at most). */
  ids: string[];
}

/** A checked record as the walk sees it: its id and its full-precision time. */
export interface Timed {
  id: string;
  at: string;
}

export interface PageFacts {
  /** The walk's position the request was made for (null for the newest page). */
  upTo: string | null;
  /** The position the previous page set, to be confirmed by this one; null when none is owed. */
  anchor: Anchor | null;
  /** The fallback if this page does not confirm the anchor. */
  fallback: Anchor | null;
  /** Requested page size. */
  limit: number;
  /** Valid records, in page order. */
  records: Timed[];
  /** Records on the page, quarantined ones included. */
  count: number;
  /** Ids of the quarantined records that had one: their place still confirms an anchor. */
  rejectIds?: readonly string[] | undefined;
  /** Why the first quarantined record was, if any: said when a page has no valid one. */
  rejectReason?: string | undefined;
  hasMore: boolean;
  /** The walk stops once a page reaches below this instant; null walks to the end. */
  floor: string | null;
  /**
   * Where earlier walks stored what lies below the floor (the floor under the stream's old
   * checkpoint, which a fill's lowest slice walks down to): the ids of the page's run below the
   * floor (`floorRun`) the mirror stored before this walk began. Only a run held whole ends the walk;
   * a booking stored since, or never, was dated into the past or created late with an older time,
   * and the walk reads on. Undefined where nothing vouches (a slice's bound).
   */
  held?: ReadonlySet<string> | undefined;
  /**
   * Where nothing vouches for what lies below the floor (a typed fill's bound between two slices): a
   * run below it ends the walk only on a page that served again the bookings the page before ended
   * with below the floor. From their time the feed serves none of a run misdated into the past.
   */
  confirmFloor?: boolean | undefined;
  /** This page answers a request asked again because the first answer made no sense; default false. */
  again?: boolean | undefined;
  /**
   * How many records the page before held, when it was short (`isShort`); at a slice's ceiling, a
   * probed time that is no end the feed can vouch for, this page's own count.
   */
  shortBefore?: number | undefined;
}

export type Step =
  /** The walk is complete. */
  | { kind: "done"; reason: "end" | "floor" }
  /** Read on from `upTo`; the next page must confirm `anchor`, else fall back to `fallback`. */
  | { kind: "next"; upTo: string; anchor: Anchor; fallback: Anchor | null }
  /** The page did not confirm the anchor: ask again from the fallback, which must be confirmed. */
  | { kind: "fall-back"; upTo: string; anchor: Anchor; missing: Anchor }
  /**
   * A page only of the milliseconds `from` to `to`: the feed cannot page within them. A full page,
   * or one as short as the page before it: a server that caps its pages may have cut it.
   */
  | { kind: "tie"; from: string; to: string; upTo: string }
  /**
   * Asked twice from `upTo` with no anchor owed, the feed served nothing and still claims more: its
   * end, or bookings it will not serve. One page cannot tell; the list can (walk.ts `confirmEnd`).
   */
  | { kind: "end-unconfirmed"; upTo: string | null; message: string }
  /** The source answered something the walk cannot make sense of. */
  | { kind: "refuse"; message: string; retry: boolean };

/** The cursor to send for a position: the next whole millisecond after it. */
export function cursorFor(upTo: string | null): string | undefined {
  if (upTo === null) return undefined;
  return shift(millisOf(upTo), 1);
}

/** Whether a page is short: fewer records than asked for, and no more claimed. */
export function isShort(f: Pick<PageFacts, "count" | "limit" | "hasMore">): boolean {
  return f.count < f.limit && !f.hasMore;
}

/** Decides what follows a page. Pure: same facts, same step. */
export function nextStep(f: PageFacts): Step {
  const { records } = f;
  if (f.count === 0 && f.hasMore)
    return unsteered(f, "the feed answered an empty page that claims more (hasMore: true)", true);
  // A page that ends above the anchor (a tie it cannot reach past) can neither confirm nor
  // refute it: the anchor waits for the next page. An empty one refutes it.
  const anchor = f.anchor;
  const above = anchor !== null && records.length > 0 && records.every((r) => r.at > anchor.at);
  if (anchor !== null && !above && !confirms(records, f.rejectIds ?? [], anchor)) {
    if (f.fallback === null)
      return refuse(
        `the feed did not serve again the bookings at ${anchor.at} (${anchor.ids.slice(0, 3).join(", ")}) that its previous page ended with: its times or its order are inconsistent`,
        false,
      );
    return { kind: "fall-back", upTo: f.fallback.at, anchor: f.fallback, missing: anchor };
  }
  if (f.count === 0) return { kind: "done", reason: "end" };
  const short = isShort(f);
  if (records.length === 0) {
    if (short) return { kind: "done", reason: "end" };
    const why = f.rejectReason ? ` (${f.rejectReason})` : "";
    return unsteered(f, `the feed answered ${f.count} records and none it can steer by${why}`, false);
  }
  const last = records[records.length - 1] as Timed;
  const beforeLast = records[records.length - 2];
  const end = beforeLast !== undefined && beforeLast.at < last.at ? beforeLast.at : last.at;
  // Here an anchor owed is confirmed, unless the page ends above it.
  const confirmed = anchor !== null && !above && f.floor !== null && anchor.at < f.floor;
  if (f.floor !== null && endsAtFloor(records, f.floor, f.limit, f.held) && (!f.confirmFloor || confirmed))
    return { kind: "done", reason: "floor" };
  // A short page is asked past once (a server that caps the page size and says `hasMore: false`
  // would otherwise end every walk), so the walk ends on a short page that brings nothing older.
  // Unless the page before was as short: then it is a capping server's page, which may have cut a
  // run of one time short as well, and only the list can tell (the tie run below).
  if (f.upTo !== null && end >= f.upTo && short && f.shortBefore !== f.count)
    return { kind: "done", reason: "end" };
  if (f.upTo === null || end < f.upTo) {
    // A run below the floor read past may be bookings dated into the past, which the feed serves
    // again from none of their times: the walk falls back above the run, not into it.
    const higher =
      (f.floor === null ? null : aboveRun(records, f.floor, end, f.upTo)) ?? nextUp(records, end, f.upTo);
    return {
      kind: "next",
      upTo: end,
      anchor: anchorAt(records, end),
      fallback: higher === null ? null : anchorAt(records, higher),
    };
  }
  // An inclusive server re-serves the cursor's own millisecond, so a tie can span two of them.
  const from = millisOf(f.upTo);
  const to = maxOf(records.map((r) => millisOf(r.at))) as string;
  if (records.every((r) => r.at >= instantOf(from)) && to <= (cursorFor(f.upTo) as string))
    return { kind: "tie", from, to, upTo: justBefore(from) };
  return refuse(
    `the feed answered cursor ${cursorFor(f.upTo)} with ${f.count} records, none older than ${f.upTo} (newest ${maxOf(records.map((r) => r.at))})`,
    true,
  );
}

/**
 * A page that claims more but holds nothing to steer by (empty, or only records without a valid
 * `_id` and `createdAt`). With no anchor owed, asked twice, it may be the feed's end under a quirk
 * (`hasMore: true` on every page): that is for the list to show. With an anchor owed it is no end.
 */
function unsteered(f: PageFacts, message: string, retry: boolean): Step {
  if (f.anchor !== null) return refuse(message, retry);
  if (f.again) return { kind: "end-unconfirmed", upTo: f.upTo, message };
  return refuse(message, true);
}

function refuse(message: string, retry: boolean): Step {
  return { kind: "refuse", message, retry };
}

function confirms(records: readonly Timed[], rejectIds: readonly string[], anchor: Anchor): boolean {
  const ids = new Set(anchor.ids);
  return records.some((r) => ids.has(r.id)) || rejectIds.some((id) => ids.has(id));
}

/**
 * Bookings in order below the floor a page must end with to show the walk passed it: fewer may be
 * bookings the source misdated into the past, which a page that ends with them cannot tell apart.
 */
const FLOOR_RUN = 5;

/**
 * The records a page ends in below the floor, in order. Read from the page's end, a record at or
 * above the floor, or one older than the record after it, ends the run: a booking misdated into
 * the past sits among newer ones.
 */
export function floorRun(records: readonly Timed[], floor: string): Timed[] {
  let i = records.length;
  while (i > 0) {
    const t = (records[i - 1] as Timed).at;
    if (t >= floor || (i < records.length && t < (records[i] as Timed).at)) break;
    i--;
  }
  return records.slice(i);
}

/**
 * Whether the page ends the walk at its floor: its `floorRun` is `FLOOR_RUN` long (on a page of
 * fewer, all but one) and, where `held` is known, held whole. At a page's end a shorter run is read
 * past, and the next page shows what follows it.
 */
export function endsAtFloor(
  records: readonly Timed[],
  floor: string,
  limit: number,
  held?: ReadonlySet<string>,
): boolean {
  const run = floorRun(records, floor);
  if (run.length < Math.max(2, Math.min(FLOOR_RUN, limit - 1))) return false;
  return held === undefined || run.every((r) => held.has(r.id));
}

/**
 * The page's nearest time above its run below the floor among its records at or above the floor: the
 * top of the gap in which the mirror must hold nothing for the run to end the walk (held.ts). Not
 * the record before the run on the page, which may be dated below the run, as misdated as it.
 */
export function aboveFloorRun(records: readonly Timed[], floor: string): string | null {
  const top = floorRun(records, floor)[0];
  if (top === undefined) return null;
  const atOrAbove = records.filter((r) => r.at >= floor);
  return nextUp(atOrAbove, top.at, null);
}

/**
 * The time of the record just above the page's run below the floor, if one is above `end` and below
 * `upTo`: where a walk that read past the run falls back to.
 */
function aboveRun(records: readonly Timed[], floor: string, end: string, upTo: string | null): string | null {
  const run = floorRun(records, floor).length;
  const at = run > 0 ? records[records.length - run - 1]?.at : undefined;
  return at !== undefined && at > end && (upTo === null || at < upTo) ? at : null;
}

/** The page's next time up from `end` (below `upTo`): where to fall back to. */
function nextUp(records: readonly Timed[], end: string, upTo: string | null): string | null {
  let best: string | null = null;
  for (const { at } of records)
    if (at > end && (upTo === null || at < upTo) && (best === null || at < best)) best = at;
  return best;
}

function anchorAt(records: readonly Timed[], at: string): Anchor {
  const ids: string[] = [];
  for (const r of records) if (r.at === at) ids.push(r.id);
  return { at, ids };
}

/** The millisecond an instant falls in (`toISOString()` form). */
export function millisOf(instant: string): string {
  return /\.\d{9}Z$/.test(instant) ? `${instant.slice(0, -7)}Z` : instant;
}

/** A millisecond time (`toISOString()` form) as an instant; an instant is returned as it is. */
export function instantOf(time: string): string {
  return /\.\d{3}Z$/.test(time) ? `${time.slice(0, -1)}000000Z` : time;
}

/** The last instant before the millisecond `ms` begins. */
export function justBefore(ms: string): string {
  return `${shift(ms, -1).slice(0, -1)}999999Z`;
}

/** A millisecond time moved by `ms` milliseconds. */
export function shift(iso: string, ms: number): string {
  return new Date(Date.parse(iso) + ms).toISOString();
}

/** Largest of instants (text order is time order for normalised times), or null for none. */
export function maxOf(times: readonly string[]): string | null {
  let m: string | null = null;
  for (const t of times) if (m === null || t > m) m = t;
  return m;
}
