/**
 * How far behind the mirror is, read before the walk so the run knows whether to fill in parallel.
 * The source's total (a list page of one) against the mirror's count is also the drift check's
 * comparison, so the everyday sync still makes one feed request and that one. A typed mirror has no
 * total of its type: it judges by its checkpoint's age, and only an old one is placed in the list.
 */
import { coerceError, isAbortError } from "../../errors.js";
import { instantOf, shift } from "../feed/window.js";
import { sourceTotal } from "../list/drift.js";
import { bisect, timeAt } from "../list/positions.js";
import type { BookingType, FeedPage, RunCounters, SyncDeps } from "../ports.js";

/** A typed mirror whose checkpoint is older than this is placed in the list to see how far behind it is. */
export const TYPED_FILL_AGE_MS = 60 * 60 * 1000;

export interface Behind {
  /** Bookings the mirror lacks, as far as this can tell. */
  behind: number;
  /** The source's total, when it was read: the drift check's figure. */
  sourceTotal?: number | undefined;
  /** The total could not be read: the drift check would fail the same way, so it is skipped. */
  unread?: boolean | undefined;
}

/**
 * How far behind the stream is. A failed read only costs the parallel speed (it says 0): a list the
 * source refuses must not stop the walk, which the feed alone can do.
 */
export async function howFarBehind(
  deps: SyncDeps,
  stream: {
    bookingType: BookingType | undefined;
    checkpoint: string | null;
    lookbackMs: number;
    newest?: FeedPage | undefined;
  },
  counters: RunCounters,
): Promise<Behind> {
  try {
    if (stream.bookingType === undefined) {
      const total = await sourceTotal(deps, counters);
      return { behind: total - (await deps.store.countAccounted()), sourceTotal: total };
    }
    const { checkpoint, newest } = stream;
    // The feed's newest page already reaches the checkpoint: less than a page is new.
    if (checkpoint !== null && newest?.records.some((r) => r.ok && r.at <= instantOf(checkpoint)))
      return { behind: 0 };
    if (checkpoint !== null && deps.clock.now().getTime() - Date.parse(checkpoint) < TYPED_FILL_AGE_MS)
      return { behind: 0 };
    const total = await sourceTotal(deps, counters);
    if (checkpoint === null) return { behind: total };
    const floor = shift(checkpoint, -stream.lookbackMs);
    // The first position older than the floor: how many bookings of every type lie above it.
    const older = async (position: number) => {
      const at = (await timeAt(deps, position, counters)).createdAt;
      return at === undefined || (at !== null && at < floor);
    };
    return { behind: await bisect(-1, total, older) };
  } catch (err) {
    if (isAbortError(err) && deps.signal.aborted) throw err;
    deps.logger.warn(
      { err: coerceError(err) },
      stream.bookingType === undefined
        ? "drift check failed: the source's total could not be read; walking the feed one page at a time (the sync itself is not affected)"
        : "the source's total could not be read to place this typed mirror; walking the feed one page at a time",
    );
    return { behind: 0, unread: true };
  }
}
