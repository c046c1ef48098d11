/**
 * The walk's reducer: a page read, the walk's progress before it → its progress after it and what
 * the walk does next. Pure (no I/O, no log, its input untouched), so it is tested in a table
 * (test/walk-advance.test.ts); the window's verdict on the page (window.ts) is the action itself,
 * except that a refusal the walk may ask past becomes `again`, and a tie run names the bookings read.
 */
import type { FeedPage, WalkProgress } from "../ports.js";
import { isShort, maxOf, millisOf, nextStep, type PageFacts, type Step, type Timed } from "./window.js";

/** A feed page as the walk read it: asked for at `upTo`, `again` when the first answer made no sense. */
export type PageRead = Pick<PageFacts, "upTo" | "limit" | "held" | "confirmFloor"> & {
  again: boolean;
  page: Pick<FeedPage, "records" | "hasMore">;
};

/**
 * What the walk does after a page: the one verdict type from the page to the walk's `switch`. The
 * window's steps as they are (window.ts says what each means), a tie run with the ids the page
 * served in it, and a refusal split in two: `again` asks for the same page once more, saving
 * nothing; `refuse` stops the walk, saving its progress first when it `restart`s from the ceiling.
 */
export type Action =
  | Exclude<Step, { kind: "tie" | "refuse" }>
  | (Extract<Step, { kind: "tie" }> & { known: string[] })
  | { kind: "again"; problem: string }
  | { kind: "refuse"; message: string; restart: boolean };

/** The progress after `read` and the walk's next action. Same progress and page, same answer. */
export function advance(progress: WalkProgress, read: PageRead): { progress: WalkProgress; action: Action } {
  const facts = factsOf(progress, read);
  const { records } = facts;
  const step = nextStep(facts);
  if (step.kind === "refuse") {
    if (step.retry && !read.again) return { progress, action: { kind: "again", problem: step.message } };
    // A position the source will not confirm is no place to resume from: the walk starts over.
    const restart = !step.retry;
    const ceiling = progress.ceiling ?? null;
    const next = restart
      ? `starts this walk over from ${ceiling ?? "the newest booking"}`
      : `resumes at ${read.upTo ?? "the newest booking"}`;
    const message = `${step.message}; stopped with the checkpoint unmoved (the next run ${next})`;
    const { short: _, ...over } = progress;
    const after = restart ? { ...over, upTo: ceiling, anchor: null, fallback: null } : progress;
    return { progress: after, action: { kind: "refuse", message, restart } };
  }
  const { short: _, ...before } = progress;
  const short = isShort(facts) ? { short: facts.count } : {};
  const after = { ...before, pages: progress.pages + 1, top: topAfter(progress.top, records), ...short };
  switch (step.kind) {
    case "done":
      // A slice's ceiling is a probed booking's time: an empty answer there is no end the feed can vouch for.
      if (read.page.records.length === 0 && progress.ceiling && read.upTo === progress.ceiling) {
        const message = "the feed served nothing at a slice's ceiling";
        return { progress: after, action: { kind: "end-unconfirmed", upTo: read.upTo, message } };
      }
      return { progress: after, action: step };
    case "end-unconfirmed":
      return { progress: after, action: step };
    case "next":
      return {
        progress: { ...after, upTo: step.upTo, anchor: step.anchor, fallback: step.fallback },
        action: step,
      };
    case "fall-back":
      return { progress: { ...after, upTo: step.upTo, anchor: step.anchor, fallback: null }, action: step };
    case "tie": {
      const known = records.filter((r) => inMillis(r.at, step.from, step.to)).map((r) => r.id);
      return {
        progress: { ...after, upTo: step.upTo, anchor: null, fallback: null },
        action: { ...step, known },
      };
    }
  }
}

/** What the window judges a page by: where the walk stands, and the page's records as times. */
function factsOf(
  progress: WalkProgress,
  read: PageRead,
): PageFacts & { records: Timed[]; rejectIds: string[] } {
  const { anchor, fallback, floor } = progress;
  const { page, ...asked } = read;
  const records = steeredBy(page.records);
  const rejectIds: string[] = [];
  let rejectReason: string | undefined;
  for (const r of page.records) {
    if (r.ok) continue;
    if (r.id !== null) rejectIds.push(r.id);
    rejectReason ??= r.reason;
  }
  const count = page.records.length;
  const seen = { records, rejectIds, rejectReason, count, hasMore: page.hasMore };
  // A slice's ceiling is a probed booking's time, so a short page there is no end the feed can vouch
  // for: it may be cut by a capping server as much as one after a page as short.
  const atCeiling = read.upTo !== null && read.upTo === progress.ceiling;
  return { ...asked, anchor, fallback, floor, shortBefore: atCeiling ? count : progress.short, ...seen };
}

/** The records a walk steers by: a page's valid ones, as times. */
export function steeredBy(records: FeedPage["records"]): Timed[] {
  return records.flatMap((r) => (r.ok ? [{ id: r.id, at: r.at }] : []));
}

/** The checkpoint's candidate after a page: a record newer than the one before it on the page is out of place. */
function topAfter(top: string | null, records: readonly Timed[]): string | null {
  const inPlace = records.filter((r, i) => i === 0 || (records[i - 1] as Timed).at >= r.at);
  return maxOf([...inPlace.map((r) => r.at), ...(top === null ? [] : [top])]);
}

/** Whether an instant falls in the milliseconds `from` to `to`. */
function inMillis(at: string, from: string, to: string): boolean {
  const ms = millisOf(at);
  return ms >= from && ms <= to;
}
