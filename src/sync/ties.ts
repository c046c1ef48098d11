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

/** Pages of one run read at most: 100,000 bookings sharing one millisecond, at 100 a page. */
export const TIE_MAX_PAGES = 1000;

export interface TieOptions {
  /** Bookings per request, 1–100. */
  pageSize: number;
  /** The feed stream's scope: list-bookings cannot filter by type, so other types are left out. */
  bookingType?: BookingType | undefined;
  /** Pages to read at most, the search's excluded; default TIE_MAX_PAGES. */
  maxPages?: number | undefined;
}

/**
 * Stores every booking created at `at` that list-bookings serves. True when the walk got past the
 * run (or to the end of the list); false when the page bound stopped it first. Adds its requests
 * and writes to `counters`. Throws when a request fails; what was stored stays.
 */
export async function readTieRun(
  deps: ListDeps<Pick<DetailStore, "commitDetailBatch">>,
  at: string,
  options: TieOptions,
  counters: RunCounters,
): Promise<boolean> {
  const { pageSize } = options;
  const found = await locate(deps, at, counters);
  if (found === null) return true; // the list is empty
  const inRun = (r: ListPage["records"][number]) =>
    r.createdAt === at && (!options.bookingType || !r.ok || r.record.type === options.bookingType);
  // Start on the page holding the booking just above the run.
  let start = Math.max(0, found.position - 1);
  let pagesLeft = options.maxPages ?? TIE_MAX_PAGES;
  for (;;) {
    const covered = start - (start % pageSize);
    let reads = 0;
    let landedInside = false;
    const { end } = await walkList(
      deps,
      {
        pageSize,
        from: { covered, total: found.total },
        maxPages: pagesLeft,
        judge(page, step) {
          reads++;
          if (reads === 1 && covered > 0 && !page.records.some((r) => newer(r.createdAt, at))) {
            landedInside = true;
            return true;
          }
          return step.contiguous && page.records.some((r) => r.createdAt !== null && r.createdAt < at);
        },
        onPage(page) {
          storeListPage(deps, { ...page, records: page.records.filter(inRun) }, {}, counters);
        },
      },
      counters,
    );
    pagesLeft -= reads;
    if (!landedInside) return end !== "limit";
    if (pagesLeft <= 0) return false;
    deps.logger.debug({ createdAt: at, page: covered / pageSize + 1 }, "tie run: starting a page higher");
    start = covered - 1;
  }
}

function newer(createdAt: string | null, at: string): boolean {
  return createdAt !== null && createdAt > at;
}

/**
 * The list position (0-based, newest first) of the newest booking created at or before `at`, by
 * binary search over pages of one booking, and the list's total; null when the list is empty. A
 * booking without a readable createdAt counts as "at or before", which only moves the start up.
 */
async function locate(
  deps: ListDeps<unknown>,
  at: string,
  counters: Pick<RunCounters, "pages" | "requests" | "retries">,
): Promise<{ position: number; total: number } | null> {
  let total = 0;
  /** Whether the booking at `position` is at or before `at`; past the end counts as yes. */
  const atOrBefore = async (position: number): Promise<boolean> => {
    const page = await deps.api.listBookings({ page: position + 1, pageSize: 1 }, deps.signal);
    counters.pages++;
    counters.requests += page.attempts;
    counters.retries += page.attempts - 1;
    total = page.total;
    const record = page.records[0];
    return record === undefined || !newer(record.createdAt, at);
  };
  if (await atOrBefore(0)) return total === 0 ? null : { position: 0, total };
  let lo = 1;
  let hi = total;
  while (lo < hi) {
    const mid = Math.floor((lo + hi) / 2);
    if (await atOrBefore(mid)) hi = mid;
    else lo = mid + 1;
  }
  return { position: lo, total };
}
