/**
 * Reading a tie run the feed cannot page through. When a full feed page holds only one createdAt
 * (window.ts), the rest of that run is out of the feed's reach: its cursor is a time, and every
 * booking past the page shares it. list-bookings pages by position, newest first, so it can reach
 * them: the run is found by a binary search over positions (pages of one booking, about 20 small
 * requests for a million), then read page by page until a page reaches an older booking. Its
 * bookings are stored as full records, which fill the summary columns too.
 *
 * The source may change meanwhile. Inserts push bookings to later pages (read twice, harmless) and
 * the walk steps back over removals (list-position.ts). A removal during the search can make it
 * land inside the run, past its newest bookings; so the first page read must hold a booking newer
 * than the run, or be the top of the list, or the walk starts again a page higher.
 */
import type { DetailStore, ListDeps } from "./detail-ports.js";
import { storeListPage, walkList } from "./list-walk.js";
import type { BookingType, ListPage, RunCounters } from "./ports.js";
import { bisect, timeAt } from "./positions.js";

/**
 * Whether `readTie` read a whole run, and if not, why. A whole one says where the run starts in
 * list-bookings and, when it saw one it can vouch for, the newest booking below it.
 */
export type TieRead =
  | { complete: true; start?: number | undefined; below?: { id: string; at: string } | undefined }
  | { complete: false; why: string };

/** The milliseconds of a tie run (`from` to `to`, both included) and the ids the feed served in it. */
export interface TieWindow {
  from: string;
  to: string;
  known: string[];
}

/** Pages of one run read at most: 100,000 bookings sharing one millisecond, at 100 a page. */
export const TIE_MAX_PAGES = 1000;

export interface TieOptions {
  /** Bookings per request, 1–100. */
  pageSize: number;
  /** The feed stream's scope: list-bookings cannot filter by type, so other types are left out. */
  bookingType?: BookingType | undefined;
  /** Pages to read at most, the search's excluded; default TIE_MAX_PAGES. */
  maxPages?: number | undefined;
  /** The reconcile run the bookings read are listed by (detail-ports.ts `listedBy`). */
  listedBy?: number | undefined;
  /** Ids the feed already served in the run: a read that did not meet them all is not whole. */
  known?: readonly string[] | undefined;
}

/**
 * Stores every booking created from `from` to `to` (milliseconds, both included) that
 * list-bookings serves, and says whether it read them
 * all: not when the page bound stopped it first, nor when the run's pages held fewer distinct
 * bookings than the run has positions (a server whose order within a tie changes from one request
 * to the next can skip some; the contract only says "by creation date"), nor when it did not meet
 * every booking the feed served in the run (a record dated older than its place ends a read early).
 * Adds its requests and writes to `counters`. Throws when a request fails; what was stored stays.
 */
export async function readTieRun(
  deps: ListDeps<Pick<DetailStore, "commitDetailBatch">>,
  { from, to }: { from: string; to: string },
  options: TieOptions,
  counters: RunCounters,
): Promise<TieRead> {
  const { pageSize, bookingType } = options;
  const within = (t: string | null) => t !== null && t >= from && t <= to;
  const found = await locate(deps, to, counters);
  if (found === null) return { complete: true, start: 0 }; // the list is empty
  const inRun = (r: ListPage["records"][number]) => {
    if (!within(r.createdAt)) return false;
    if (!bookingType) return true;
    // A reject whose type cannot be read is kept: quarantined, not dropped.
    const type = r.ok ? r.record.type : field(r.raw, "type");
    return type === bookingType || (!r.ok && typeof type !== "string");
  };
  const seen = new Set<string>();
  /** The run's first and last-plus-one positions, and the list's total when each was read. */
  let first: { position: number; total: number } | undefined;
  let last: { position: number; total: number } | undefined;
  let below: { id: string; at: string } | undefined;
  // Start on the page holding the booking just above the run.
  let start = Math.max(0, found.position - 1);
  let pagesLeft = options.maxPages ?? TIE_MAX_PAGES;
  for (;;) {
    const covered = start - (start % pageSize);
    let reads = 0;
    let landedInside = false;
    const { end, position } = await walkList(
      deps,
      {
        pageSize,
        from: { covered, total: found.total },
        maxPages: pagesLeft,
        judge(page, step) {
          reads++;
          // A quarantined record without a readable time holds its place in the run all the same.
          for (const r of page.records)
            if (r.id !== null && (within(r.createdAt) || (!r.ok && r.createdAt === null))) seen.add(r.id);
          // By place, not by any one record's date: the newer ones lead the page, the older ones
          // trail it, so a record dated off its place in the middle decides nothing.
          const newerOnes = leading(page, (t) => t > to);
          if (reads === 1 && covered > 0 && newerOnes === 0) {
            landedInside = true;
            return true;
          }
          const pageStart = (step.page - 1) * pageSize;
          // The run starts on the first page not made only of newer bookings.
          if (first === undefined && newerOnes < page.records.length)
            first = { position: pageStart + newerOnes, total: page.total };
          const olderOnes = trailing(page, (t) => t < from);
          if (!step.contiguous || olderOnes === 0) return false;
          last = { position: pageStart + page.records.length - olderOnes, total: page.total };
          below = firstBelow(page, from, bookingType);
          return true;
        },
        onPage(page) {
          storeListPage(
            deps,
            { ...page, records: page.records.filter(inRun) },
            { listedBy: options.listedBy },
            counters,
          );
        },
      },
      counters,
    );
    pagesLeft -= reads;
    if (landedInside) {
      if (pagesLeft <= 0)
        return { complete: false, why: "the run's start was not found within the page bound" };
      deps.logger.debug({ from, to, page: covered / pageSize + 1 }, "tie run: starting a page higher");
      start = covered - 1;
      continue;
    }
    if (end === "limit")
      return {
        complete: false,
        why: `the run is longer than the page bound (${options.maxPages ?? TIE_MAX_PAGES})`,
      };
    const unmet = (options.known ?? []).filter((id) => !seen.has(id));
    if (unmet.length > 0)
      return {
        complete: false,
        why: `its pages did not hold ${unmet.length} of the bookings the feed served in it (${unmet.slice(0, 3).join(", ")})`,
      };
    const whole = { complete: true as const, start: found.position, below };
    if (first === undefined) return whole;
    if (end === "end" && last === undefined)
      last = { position: position.total ?? 0, total: position.total ?? 0 };
    if (last === undefined) return whole;
    // Inserts and removals above the run moved its end by as much as the total moved.
    const length = last.position - first.position - (last.total - first.total);
    if (seen.size >= length) return whole;
    return {
      complete: false,
      why: `its pages held ${seen.size} distinct bookings over ${length} positions (an order within the tie that changes between requests skips some)`,
    };
  }
}

/**
 * The newest booking below the run on the page that ended the read, when the record after it
 * agrees with its place: the feed's next page must serve it again (window.ts, the anchor).
 */
function firstBelow(
  page: ListPage,
  from: string,
  bookingType: BookingType | undefined,
): { id: string; at: string } | undefined {
  // A typed feed serves only its own type.
  const records = page.records.filter((r) => !bookingType || (r.ok && r.record.type === bookingType));
  const i = records.findIndex((r) => r.createdAt !== null && r.createdAt < from);
  const r = records[i];
  const next = records[i + 1];
  if (!r?.ok || next === undefined || next.createdAt === null || next.createdAt > r.createdAt)
    return undefined;
  return { id: r.id, at: r.at };
}

/** How many records lead the page whose createdAt passes `test`. */
function leading(page: ListPage, test: (t: string) => boolean): number {
  const k = page.records.findIndex((r) => r.createdAt === null || !test(r.createdAt));
  return k === -1 ? page.records.length : k;
}

/** How many records trail the page whose createdAt passes `test`. */
function trailing(page: ListPage, test: (t: string) => boolean): number {
  let n = 0;
  for (let i = page.records.length - 1; i >= 0; i--) {
    const t = page.records[i]?.createdAt;
    if (t === null || t === undefined || !test(t)) break;
    n++;
  }
  return n;
}

function field(raw: unknown, key: string): unknown {
  return typeof raw === "object" && raw !== null ? (raw as Record<string, unknown>)[key] : undefined;
}

/**
 * The list position (0-based, newest first) of the newest booking created at or before `at`, by
 * binary search over pages of one booking, and the list's total; null when the list is empty. A
 * booking without a readable createdAt is passed over for the next one down (a few at most, then
 * it counts as "at or before", which only moves the start up).
 */
async function locate(
  deps: ListDeps<unknown>,
  at: string,
  counters: Pick<RunCounters, "pages" | "requests" | "retries">,
): Promise<{ position: number; total: number } | null> {
  let total = 0;
  const atOrBefore = async (position: number) => {
    const seen = await timeAt(deps, position, counters);
    total = seen.total;
    return seen.createdAt === undefined || seen.createdAt === null || seen.createdAt <= at;
  };
  if (await atOrBefore(0)) return total === 0 ? null : { position: 0, total };
  // Never past the end: the list may have shrunk meanwhile.
  const position = await bisect(0, total, atOrBefore);
  return { position: Math.min(position, total), total };
}
