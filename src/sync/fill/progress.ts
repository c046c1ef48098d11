/**
 * A fill's resumable state: the feed walked as time slices at once, and list-bookings pages read for
 * details. Saved as the feed stream's progress (`sync_state.progress_json`) with every page, so a
 * killed fill resumes its unfinished slices and unread pages; `status`, `/readyz` and the status page
 * read it to show how far a fill has got and when it should end.
 */
import { z } from "zod";
import type { Anchor } from "../feed/window.js";

/** Pages of list-bookings read for details, as inclusive runs `[from, to]`. */
export type PageRuns = Array<[from: number, to: number]>;

/** The details half of a fill: every list-bookings page of the source as it was when the fill began. */
export interface FillDetails {
  /** Bookings per page. */
  pageSize: number;
  /** Pages to read: the list's page count when the fill planned them. */
  pages: number;
  /** Pages read and saved so far. */
  read: PageRuns;
  /** Only this source platform's pages (a filtered backfill); absent for all. */
  sourcePlatform?: string | undefined;
}

export interface FillProgress {
  /** Tells a fill from a single walk saved by an earlier version (a bare `WalkProgress`). */
  kind: "fill";
  /** When the fill began (ISO); its checkpoint never moves past it. */
  startedAt: string;
  /** Where the walk stops: the old checkpoint minus the lookback; null reads the whole feed. */
  floor: string | null;
  /** Newest createdAt (an instant) the slices already finished saw: the checkpoint's candidate. */
  top: string | null;
  /** Slices planned when the fill began. */
  sliceCount: number;
  /** The unfinished slices, newest first: each a walk from its `upTo` down to its `floor`. */
  slices: WalkProgress[];
  /** The details pages, or null when the fill reads no details. */
  details: FillDetails | null;
  /** Requests' pages read so far (feed and list), across resumes. */
  pages: number;
  /** Pages the whole fill should take, as estimated when it planned them. */
  plannedPages: number;
  /** When the fill should end at the rate of the current run (ISO); null until it can tell. */
  etaAt: string | null;
  /** When this state was saved (ISO). */
  savedAt: string;
}

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
  return (
    typeof progress === "object" && progress !== null && (progress as { kind?: unknown }).kind === "fill"
  );
}

/** Where an unfinished walk stands; saved with each page so a restart resumes. */
export interface WalkProgress {
  /** When the walk started (ISO); the checkpoint never moves past it. */
  startedAt: string;
  /** The walk is done once a page reaches below this instant; null walks to the end of the feed. */
  floor: string | null;
  /**
   * Where the walk starts, and starts over when the source will not confirm its position: null for
   * the newest booking, a slice's upper bound in a fill (fill/slices.ts). Absent in older saves: null.
   */
  ceiling?: string | null | undefined;
  /**
   * Every booking created at or before this instant may still be unread; null starts from the
   * newest. Not the server's cursor: the request's cursor is derived from it (see feed/window.ts).
   */
  upTo: string | null;
  /** Bookings at `upTo` the next page must serve again, proving the position; null when none is owed. */
  anchor: Anchor | null;
  /** Where to go back to if the next page does not serve the anchor again. */
  fallback: Anchor | null;
  /** Newest valid createdAt seen by this walk (an instant), the checkpoint it will record. */
  top: string | null;
  /** Pages read so far by this walk, across resumes. */
  pages: number;
}

const instant = z.string().min(1);
const anchor = z.object({ at: instant, ids: z.array(z.string()) }).nullable();
const slice = z.object({
  startedAt: instant,
  ceiling: instant.nullable().optional(),
  floor: instant.nullable(),
  upTo: instant.nullable().optional(),
  anchor: anchor.optional(),
  fallback: anchor.optional(),
  top: instant.nullable(),
  pages: z.number().int().nonnegative(),
});
const fillShape = z.object({
  kind: z.literal("fill"),
  startedAt: instant,
  floor: instant.nullable(),
  top: instant.nullable(),
  sliceCount: z.number().int().nonnegative(),
  slices: z.array(slice),
  details: z
    .object({
      pageSize: z.number().int().min(1).max(100),
      pages: z.number().int().nonnegative(),
      read: z.array(z.tuple([z.number().int(), z.number().int()])),
      sourcePlatform: z.string().optional(),
    })
    .nullable(),
  pages: z.number().int().nonnegative(),
  plannedPages: z.number().int().nonnegative(),
  etaAt: instant.nullable(),
  savedAt: instant,
});

/**
 * A saved progress as a walk can resume it: a fill of this version, a single walk of an earlier one
 * (its own form), or null for anything else (edited by hand, another version's): the checkpoint has
 * not moved, so starting over loses nothing. Two slices with one ceiling would share one position.
 */
export function resumableProgress(saved: unknown): FillProgress | WalkProgress | null {
  if (saved === null || typeof saved !== "object") return null;
  if (!("kind" in saved)) return slice.safeParse(saved).success ? (saved as WalkProgress) : null;
  const parsed = fillShape.safeParse(saved);
  if (!parsed.success) return null;
  const ceilings = new Set(parsed.data.slices.map((s) => s.ceiling ?? null));
  return ceilings.size === parsed.data.slices.length ? (saved as FillProgress) : null;
}
