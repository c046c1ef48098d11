/**
 * What the mirror says of a run of records below the walk's floor at a page's end, where earlier
 * walks stored what lies below that floor: which of them may end the walk, and which it reads past.
 */
import type { BookingType, FeedPage, SyncStore } from "../ports.js";
import { steeredBy } from "./advance.js";
import { aboveFloorRun, endsAtFloor, floorRun, millisOf, type Timed } from "./window.js";

export interface FloorHeld {
  /** The run's bookings that may end the walk (window.ts `held`); undefined where the walk does not ask. */
  held?: ReadonlySet<string>;
  /** The run's others, which the walk reads past. */
  lacked: string[];
  /** Why it reads past them, once there are some. */
  warning?: string;
  /**
   * Read past for the mirror's bookings between them and the booking above them, not for when they
   * were stored: the walk need not remember them (their place is asked again each time).
   */
  outOfPlace?: boolean;
}

/**
 * For a page that would end the walk at a floor earlier walks stored below (`heldBefore`): `held`,
 * the bookings of its run below the floor the mirror stored before the walk began, less those the
 * walk last read past; `lacked`, the others. None is held when the mirror holds a booking of the
 * stream created strictly between the run and the page's nearest booking above it at or above the
 * floor (the page's position, when it serves none), to the millisecond, leaving out the rows of the
 * page's rejects: a feed in time order would have served it between them. The run is then bookings
 * dated into the past that an earlier walk read past and stored, or the gap holds a booking the
 * source deleted and no `reconcile` has marked (the walk then reads on a page). Where the mirror
 * holds nothing there (bookings dated only a little into the past, on a quiet stream), the run ends
 * the walk as a genuine floor would.
 */
export async function heldBelowFloor(
  store: Pick<SyncStore, "storedBefore" | "holdsBetween">,
  options: { heldBefore?: string | undefined; pageSize: number; bookingType?: BookingType | undefined },
  read: { upTo: string | null; floor: string | null; page: Pick<FeedPage, "records"> },
  readPast: ReadonlySet<string>,
): Promise<FloorHeld> {
  const { upTo, floor, page } = read;
  const before = options.heldBefore;
  if (floor === null || before === undefined) return { lacked: [] };
  const timed = steeredBy(page.records);
  if (!endsAtFloor(timed, floor, options.pageSize)) return { lacked: [] };
  const run = floorRun(timed, floor);
  const ids = run.map((r) => r.id);
  const stored = await store.storedBefore(ids, before);
  const held = new Set(stored.filter((id) => !readPast.has(id)));
  const lacked = ids.filter((id) => !held.has(id));
  const below = `end a page below its floor (${floor})`;
  if (lacked.length > 0)
    return {
      held,
      lacked,
      warning: `bookings the mirror did not store before this walk began ${below}, under the checkpoint: dated into the past, or created late with an older time; read on past the floor`,
    };
  // The gap just above the run, or up to the page's position when the page serves nothing above it.
  // Not up to the position alone: a deletion anywhere on the page, or a booking the list stored
  // before the feed serves it, would send every quiet run a page on.
  const top = (run[0] as Timed).at;
  const above = aboveFloorRun(timed, floor) ?? upTo;
  // A reject with an id is in its place, at a time it cannot say: its stored row may lie in the gap.
  const unsteered = page.records.flatMap((r) => (r.ok || r.id === null ? [] : [r.id]));
  const bound = above === null ? null : millisOf(above);
  if (!(await store.holdsBetween(millisOf(top), bound, options.bookingType, unsteered)))
    return { held, lacked };
  return {
    held: new Set(),
    lacked: ids,
    outOfPlace: true,
    warning: `bookings ${below} out of their time's place: the mirror holds bookings between them and the page's bookings above them, which a feed in time order would have served between (bookings dated into the past, or the source deleted one no reconcile has marked yet); read on past the floor`,
  };
}
