/**
 * What the mirror says of a run of records below the walk's floor at a page's end, where earlier
 * walks stored what lies below that floor: which of them may end the walk, and which it reads past.
 */
import type { BookingType, FeedPage, SyncStore, WalkProgress } from "../ports.js";
import { steeredBy } from "./advance.js";
import { endsAtFloor, floorRun, millisOf, type Timed } from "./window.js";

export interface FloorHeld {
  /** The run's bookings that may end the walk (window.ts `held`); undefined where the walk does not ask. */
  held?: ReadonlySet<string>;
  /** The run's others, which the walk reads past. */
  lacked: string[];
  /** Why it reads past them, once there are some. */
  warning?: string;
}

/**
 * For a page that would end the walk at a floor earlier walks stored below (`heldBefore`): `held`,
 * the bookings of its run below the floor the mirror stored before the walk began, less those the
 * walk last read past; `lacked`, the others. None is held when the mirror holds a booking of the
 * stream between the run and the booking above it (or the walk's position, for a page all below
 * the floor): a feed in time order would have served it between them, so the run is not where the
 * floor lies but bookings dated into the past that an earlier walk read past and stored.
 */
export async function heldBelowFloor(
  store: Pick<SyncStore, "storedBefore" | "holdsBetween">,
  options: { heldBefore?: string | undefined; pageSize: number; bookingType?: BookingType | undefined },
  upTo: string | null,
  { floor }: Pick<WalkProgress, "floor">,
  page: Pick<FeedPage, "records">,
  readPast: ReadonlySet<string>,
): Promise<FloorHeld> {
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
  const above = timed[timed.length - run.length - 1]?.at ?? upTo;
  const newest = millisOf((run[0] as Timed).at);
  if (!(await store.holdsBetween(newest, above === null ? null : millisOf(above), options.bookingType)))
    return { held, lacked };
  return {
    held: new Set(),
    lacked: ids,
    warning: `bookings ${below} out of their time's place: the mirror holds bookings between them and the booking above them, which the feed would have served between; read on past the floor`,
  };
}
