/**
 * A fill's resumable state: the feed walked as time slices at once, and list-bookings pages read for
 * details. Saved as the feed stream's progress (`sync_state.progress_json`) with every page, so a
 * killed fill resumes its unfinished slices and unread pages; `status`, `/readyz` and the status page
 * read it to show how far a fill has got and when it should end.
 */
import { z } from "zod";
import { instantOf } from "../feed/window.js";

const instant = z.string().min(1);
const anchor = z.object({ at: instant, ids: z.array(z.string()) }).nullable();

const walkShape = z.object({
  /** When the walk started (ISO); the checkpoint never moves past it. */
  startedAt: instant,
  /**
   * Where the walk starts, and starts over when the source will not confirm its position: null for
   * the newest booking, a slice's upper bound in a fill (fill/slices.ts). Absent in older saves: null.
   */
  ceiling: instant.nullable().optional(),
  /** The walk is done once a page reaches below this instant; null walks to the end of the feed. */
  floor: instant.nullable(),
  /**
   * Every booking created at or before this instant may still be unread; null starts from the
   * newest. Not the server's cursor: the request's cursor is derived from it (see feed/window.ts).
   */
  upTo: instant.nullable(),
  /** Bookings at `upTo` the next page must serve again, proving the position; null when none is owed. */
  anchor,
  /** Where to go back to if the next page does not serve the anchor again. */
  fallback: anchor,
  /** Newest valid createdAt seen by this walk (an instant), the checkpoint it will record. */
  top: instant.nullable(),
  /** Pages read so far by this walk, across resumes. */
  pages: z.number().int().nonnegative(),
  /**
   * How many records the last page held when it was short (fewer than asked for, no more claimed):
   * a next page as short shows a server that caps its pages (feed/window.ts). Absent otherwise.
   */
  short: z.number().int().nonnegative().optional(),
});

/** Where an unfinished walk stands; saved with each page so a restart resumes. */
export type WalkProgress = z.infer<typeof walkShape>;

/**
 * A walk as any version saved it, read as this version's: an earlier one saved a millisecond `cursor`
 * for `upTo`, millisecond times, and no anchor.
 */
const savedWalk = walkShape
  .extend({
    upTo: instant.nullable().optional(),
    cursor: instant.nullable().optional(),
    anchor: anchor.optional(),
    fallback: anchor.optional(),
  })
  .transform(({ cursor, ...saved }): WalkProgress => {
    const upTo = saved.upTo ?? cursor ?? null;
    return {
      ...saved,
      ceiling: saved.ceiling ?? null,
      floor: saved.floor === null ? null : instantOf(saved.floor),
      upTo: upTo === null ? null : instantOf(upTo),
      anchor: saved.anchor ?? null,
      fallback: saved.fallback ?? null,
      top: saved.top === null ? null : instantOf(saved.top),
    };
  });

const fillShape = z.object({
  /** Tells a fill from a single walk saved by an earlier version (a bare `WalkProgress`). */
  kind: z.literal("fill"),
  /** When the fill began (ISO); its checkpoint never moves past it. */
  startedAt: instant,
  /** Where the walk stops: the old checkpoint minus the lookback; null reads the whole feed. */
  floor: instant.nullable(),
  /** Newest createdAt (an instant) the slices already finished saw: the checkpoint's candidate. */
  top: instant.nullable(),
  /** Slices planned when the fill began. */
  sliceCount: z.number().int().nonnegative(),
  /** The unfinished slices, newest first: each a walk from its `upTo` down to its `floor`. */
  slices: z.array(savedWalk),
  /** The details pages (every list-bookings page of the source as it was when the fill began), or null. */
  details: z
    .object({
      pageSize: z.number().int().min(1).max(100),
      /** Pages to read: the list's page count when the fill planned them. */
      pages: z.number().int().nonnegative(),
      /** Pages read and saved so far, as inclusive runs `[from, to]`. */
      read: z.array(z.tuple([z.number().int(), z.number().int()])),
      /** Only this source platform's pages (a filtered backfill); absent for all. */
      sourcePlatform: z.string().optional(),
    })
    .nullable(),
  /** Requests' pages read so far (feed and list), across resumes. */
  pages: z.number().int().nonnegative(),
  /** Pages the whole fill should take, as estimated when it planned them. */
  plannedPages: z.number().int().nonnegative(),
  /** When the fill should end at the rate of the current run (ISO); null until it can tell. */
  etaAt: instant.nullable(),
  savedAt: instant,
});

/** A fill as this version keeps it (older saves' slices read as this version's walks). */
export type FillProgress = z.output<typeof fillShape>;
/** The details half of a fill. */
export type FillDetails = NonNullable<FillProgress["details"]>;
/** Pages of list-bookings read for details, as inclusive runs `[from, to]`. */
export type PageRuns = FillDetails["read"];

/** A fill about to begin at `startedAt`: nothing of it finished yet. */
export function newFill(
  startedAt: string,
  parts: Pick<FillProgress, "floor" | "slices" | "details" | "plannedPages"> & { pages?: number },
): FillProgress {
  const base = { kind: "fill", startedAt, top: null, pages: 0, etaAt: null, savedAt: startedAt } as const;
  return { ...base, sliceCount: parts.slices.length, ...parts };
}

/** Whether a stream's saved progress is a fill (and not a single walk of an earlier version). */
export function isFill(progress: unknown): progress is FillProgress {
  return (progress as { kind?: unknown } | null | undefined)?.kind === "fill";
}

/**
 * A saved progress as a walk can resume it, read as this version's: a fill, a single walk of an
 * earlier version, or null for anything else (edited by hand, another version's): the checkpoint has
 * not moved, so starting over loses nothing. Two slices with one ceiling would share one position.
 */
export function resumableProgress(saved: unknown): FillProgress | WalkProgress | null {
  if (saved === null || typeof saved !== "object") return null;
  if (!("kind" in saved)) return savedWalk.safeParse(saved).data ?? null;
  const parsed = fillShape.safeParse(saved);
  if (!parsed.success) return null;
  const ceilings = new Set(parsed.data.slices.map((s) => s.ceiling));
  return ceilings.size === parsed.data.slices.length ? parsed.data : null;
}
