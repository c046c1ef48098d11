/**
 * Whether the feed walk ended where the feed stopped serving. Some sources say `hasMore: true` on
 * every page, the last (empty) one too: one page cannot tell that from bookings withheld, so the list,
 * which pages by position, is asked whether it holds a booking (of the stream's type) the mirror lacks.
 */
import type { ReadCounts } from "../counters.js";
import { millisOf } from "../feed/window.js";
import type { BookingType, ListPage, SyncDeps, SyncStore } from "../ports.js";
import { typeSeen } from "./booking-type.js";
import { walkList } from "./list-walk.js";
import { locate } from "./ties.js";

/** The list's verdict on the feed's end: `why` says what showed it, or what may be missing. */
export interface EndCheck {
  complete: boolean;
  why: string;
}

export interface EndOptions {
  /** Bookings per list page, 1–100. */
  pageSize: number;
  /** The stream's type: the list holds every type, so the others' bookings are no debt. */
  bookingType?: BookingType | undefined;
}

/** List pages read below the position at most. */
const MAX_PAGES = 10;

/**
 * Looks for a booking the walk still owes: created at or before `upTo` (every booking when null, and
 * one without a readable time), of the stream's type, with an `_id` (a record without one can never
 * be a booking), and not in the mirror (one it holds, those kept without a valid `createdAt` too, is
 * owed nothing). A binary search finds where such bookings start; pages from there are read until one
 * turns up or the list ends. An empty list vouches only for a walk that passed no booking: once the
 * feed served some, a list that holds none contradicts it, and nothing is vouched for.
 */
export async function confirmFeedEnd(
  deps: SyncDeps<Pick<SyncStore, "absentIds">>,
  upTo: string | null,
  options: EndOptions,
  counters: ReadCounts,
): Promise<EndCheck> {
  const bound = upTo === null ? null : millisOf(upTo);
  const where = bound === null ? "at all" : `created at or before ${bound}`;
  const type = options.bookingType ? ` of type ${options.bookingType}` : "";
  const found = bound === null ? { position: 0, total: null } : await locate(deps, bound, counters);
  if (found === null)
    return {
      complete: false,
      why: `list-bookings holds no booking at all, though the feed served bookings newer than ${bound}: the two disagree`,
    };
  if (found.total !== null && found.position >= found.total)
    return { complete: true, why: `list-bookings holds no booking ${where}` };
  const owed = (r: ListPage["records"][number]): r is ListPage["records"][number] & { id: string } =>
    r.id !== null &&
    typeSeen(r, options.bookingType) === "ours" &&
    (bound === null || r.createdAt === null || r.createdAt <= bound);
  let debt: string | null = null;
  const { end } = await walkList(
    deps,
    {
      pageSize: options.pageSize,
      from: { covered: found.position - (found.position % options.pageSize), total: found.total },
      maxPages: MAX_PAGES,
      async judge(page) {
        const ids = page.records.filter(owed).map((r) => r.id);
        debt = ids.length > 0 ? ((await deps.store.absentIds(ids))[0] ?? null) : null;
        return debt !== null;
      },
      onPage() {},
    },
    counters,
  );
  if (debt !== null)
    return {
      complete: false,
      why: `list-bookings holds bookings${type} ${where} the mirror lacks (${debt} among them)`,
    };
  if (end === "limit")
    return {
      complete: false,
      why: `list-bookings holds more than ${MAX_PAGES} pages ${where}, not read to the end`,
    };
  return { complete: true, why: `list-bookings holds no booking${type} ${where} the mirror lacks` };
}
