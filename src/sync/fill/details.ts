/**
 * The details half of a fill: the list-bookings pages over the bookings the slices stored, read at
 * once and each saved with the fill's state. Pages shift under inserts and deletes while they are
 * read, so a booking can fall between two; those still without details are then read where their
 * position says they are (the way the repair finds a gap), and any left go to the everyday pass.
 */
import { ApiError, coerceError, isAbortError, isTransient } from "../../errors.js";
import { countPage, zeroCounters } from "../counters.js";
import { millisOf, shift } from "../feed/window.js";
import { shapeProblem } from "../list/list-checks.js";
import { saveListPage } from "../list/list-walk.js";
import { runPool } from "../pool.js";
import type { ListPage, Progress, RunCounters } from "../ports.js";
import type { Filling } from "./filling.js";
import type { FillDetails } from "./progress.js";
import { addPage, unreadPages } from "./slices.js";

/** Bookings still without details one fill looks for by position. */
const LEFTOVER_CAP = 1_000;

/** Reads the unread pages, then the bookings they missed, and ends the details half of the fill. */
export async function readDetailPages(filling: Filling, details: FillDetails): Promise<void> {
  const { deps, run, totals } = filling;
  const counts = zeroCounters();
  let lastTotal: number | null = null;
  // The mirror now holds every booking above the floor: so many, not the total read before, is what
  // the pages must cover (a typed mirror counts one type of the list's two: it keeps the plan).
  const held =
    filling.walk.bookingType === undefined && details.sourcePlatform === undefined
      ? await deps.store.countAccounted(filling.state.floor === null ? null : millisOf(filling.state.floor))
      : Number.POSITIVE_INFINITY;
  const pages = Math.min(details.pages, Math.ceil(held / details.pageSize) + 1);
  // Nothing of the details half is left: the stream's progress clears once no slice is left either.
  const end = () =>
    filling.commit(
      (next) => {
        next.details = null;
      },
      saveWith(filling, { records: [] }, counts),
      false,
    );
  try {
    await runPool(
      unreadPages(details.read, pages),
      run.concurrency,
      async (page) => {
        // Never a page past the list's end, once an answer has said where it is.
        const past = lastTotal !== null && page > Math.max(1, Math.ceil(lastTotal / details.pageSize));
        const res = past
          ? undefined
          : await tolerant(filling, () => readPage(filling, page, details, counts));
        lastTotal = res?.total ?? lastTotal;
        await filling.commit(
          (next) => {
            next.details = { ...details, read: addPage(next.details?.read ?? details.read, page) };
          },
          saveWith(filling, res ?? { records: [] }, counts),
        );
      },
      deps.signal,
    );
    // The list of one platform, or a mirror of one type, cannot place a booking by the mirror's count.
    if (details.sourcePlatform === undefined && filling.walk.bookingType === undefined)
      await readLeftovers(filling, details.pageSize, lastTotal, counts);
    await end();
  } catch (err) {
    // A details half that cannot be read must not keep the next run from the feed: the everyday
    // details pass reads what is left.
    if (err instanceof ApiError && !isAbortError(err)) await end();
    throw err;
  } finally {
    for (const k of ["pages", "requests", "retries", "rejected", "inserted"] as const) totals[k] += counts[k];
  }
}

/** Saves `page` with the fill's state as the stream's progress. */
function saveWith(filling: Filling, page: Pick<ListPage, "records">, counts: RunCounters) {
  const { deps, walk } = filling;
  return (progress: Progress) =>
    saveListPage(deps, page, { progress, bookingType: walk.bookingType }, counts);
}

/**
 * One list page; undefined when the source answered a page that is not the one asked for: skipped
 * with a warning (its bookings are then found by position), since it would fail every run.
 */
async function readPage(
  filling: Filling,
  page: number,
  { pageSize, sourcePlatform }: Pick<FillDetails, "pageSize" | "sourcePlatform">,
  counts: RunCounters,
): Promise<ListPage | undefined> {
  const { deps } = filling;
  const res = await deps.api.listBookings({ page, pageSize, sourcePlatform }, deps.signal);
  countPage(counts, res.attempts);
  const problem = shapeProblem({ page, pageSize }, res);
  if (problem === null) return res;
  deps.logger.warn({ page, problem }, "fill: a details page is not the page asked for; skipped");
  return undefined;
}

/**
 * Reads the bookings still without details where the list should hold them: the mirror holds every
 * booking above the floor now, so the count of newer ones, shifted by what the list gained since,
 * is a booking's position. A page that does not hold it is followed by its neighbours, once.
 */
async function readLeftovers(
  filling: Filling,
  pageSize: number,
  total: number | null,
  counts: RunCounters,
): Promise<void> {
  const { deps } = filling;
  const { store } = deps;
  // Those a details pass put off are left to it: most likely deleted at the source.
  const leftovers = () => store.bookingsNeedingDetails(LEFTOVER_CAP, deps.clock.now().toISOString());
  const needing = await leftovers();
  if (needing.length === 0 || total === null) return;
  const drift = total - (await store.countAccounted());
  const pages = new Set<number>();
  for (const b of needing) {
    const newer = await store.countAccounted(shift(b.createdAt, 1));
    pages.add(Math.floor(Math.max(0, newer + drift) / pageSize) + 1);
  }
  const readOne = async (page: number) => {
    const res = await tolerant(filling, () => readPage(filling, page, { pageSize }, counts));
    if (res) await filling.commit(() => {}, saveWith(filling, res, counts), false);
  };
  const read = new Set<number>();
  const readAll = async (list: Iterable<number>) => {
    const todo = [...list].filter((p) => p >= 1 && !read.has(p));
    for (const p of todo) read.add(p);
    await runPool(todo.values(), filling.run.concurrency, readOne, deps.signal);
  };
  await readAll(pages);
  const left = new Set((await leftovers()).map((b) => b.id));
  if (left.size === 0) return;
  await readAll([...pages].flatMap((p) => [p - 1, p + 1]));
  const still = (await leftovers()).length;
  if (still > 0)
    deps.logger.info(
      { bookings: still },
      "fill: bookings still without details after reading where they should be; the everyday details pass goes on",
    );
}

/** A read whose failure only leaves details for later: a transient or stopping one still ends the run. */
async function tolerant<T>(filling: Filling, read: () => Promise<T>): Promise<T | undefined> {
  try {
    return await read();
  } catch (err) {
    if (isTransient(err)) throw err;
    filling.deps.logger.warn(
      { err: coerceError(err) },
      "fill: a details page could not be read; left for later",
    );
    return undefined;
  }
}
