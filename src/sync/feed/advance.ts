/** Applies the window's verdict on a feed page (window.ts) to the walk's progress, and logs it. */
import type { TieWindow } from "../list/ties.js";
import type { FeedPage, SyncDeps, WalkProgress } from "../ports.js";
import { maxOf, millisOf, nextStep, type Timed } from "./window.js";

/** A feed request in flight. */
export interface Request {
  upTo: string | null;
  cursor: string | undefined;
  page: Promise<FeedPage>;
  /** Whether this request already repeats one whose answer made no sense. */
  again: boolean;
}

/** The feed served nothing below `upTo` but claims more: the walk's end only if the list shows it. */
export interface EndUnconfirmed {
  unconfirmed: string;
  upTo: string | null;
}

/**
 * Whether the walk is done, goes on, asks again (once), met a tie run, reached an end it cannot
 * confirm itself, or must stop (refused).
 */
export function advance(
  progress: WalkProgress,
  request: Request,
  page: FeedPage,
  options: { stream: string; pageSize: number },
  logger: SyncDeps["logger"],
): "done" | "next" | "again" | TieWindow | EndUnconfirmed | { refused: string; restart: boolean } {
  const { step, records } = judge(progress, request, page, options.pageSize);
  const where = { stream: options.stream, cursor: request.cursor ?? null, records: page.records.length };
  if (step.kind === "refuse") {
    if (step.retry && !request.again) {
      logger.warn({ ...where, problem: step.message }, "the feed's answer makes no sense; asking once more");
      return "again";
    }
    return refusal(progress, request, step, options.stream);
  }
  progress.pages++;
  if (step.kind === "end-unconfirmed") return { unconfirmed: step.message, upTo: step.upTo };
  // The checkpoint's candidate: a record newer than the one before it on the page is out of place.
  const top = maxOf(
    records.filter((r, i) => i === 0 || (records[i - 1] as Timed).at >= r.at).map((r) => r.at),
  );
  if (top !== null && (progress.top === null || top > progress.top)) progress.top = top;
  switch (step.kind) {
    case "done":
      logger.debug({ ...where, reason: step.reason }, "walk complete");
      return "done";
    case "next":
      Object.assign(progress, { upTo: step.upTo, anchor: step.anchor, fallback: step.fallback });
      return "next";
    case "fall-back":
      logger.warn(
        { ...where, expected: step.missing.ids.slice(0, 3), at: step.missing.at, fallback: step.upTo },
        "the feed did not serve again the bookings its previous page ended with; reading on from the page's next time up",
      );
      Object.assign(progress, { upTo: step.upTo, anchor: step.anchor, fallback: null });
      return "next";
    case "tie":
      Object.assign(progress, { upTo: step.upTo, anchor: null, fallback: null });
      return {
        from: step.from,
        to: step.to,
        known: records.filter((r) => inMillis(r.at, step.from, step.to)).map((r) => r.id),
      };
  }
}
/** The window's verdict on a page (window.ts), and the page's usable records as times. */
function judge(progress: WalkProgress, request: Request, page: FeedPage, limit: number) {
  const records: Timed[] = [];
  const rejectIds: string[] = [];
  let rejectReason: string | undefined;
  for (const r of page.records) {
    if (r.ok) records.push({ id: r.id, at: r.at });
    else {
      if (r.id !== null) rejectIds.push(r.id);
      rejectReason ??= r.reason;
    }
  }
  const step = nextStep({
    upTo: request.upTo,
    anchor: progress.anchor,
    fallback: progress.fallback,
    limit,
    records,
    count: page.records.length,
    rejectIds,
    rejectReason,
    hasMore: page.hasMore,
    floor: progress.floor,
    again: request.again,
  });
  return { step, records };
}

/** Why the walk stops. A position the source will not confirm is no place to resume from. */
function refusal(
  progress: WalkProgress,
  request: Request,
  step: { message: string; retry: boolean },
  stream: string,
): { refused: string; restart: boolean } {
  const restart = !step.retry;
  const ceiling = progress.ceiling ?? null;
  if (restart) Object.assign(progress, { upTo: ceiling, anchor: null, fallback: null });
  const next = restart
    ? `starts this walk over from ${ceiling ?? "the newest booking"}`
    : `resumes at ${request.upTo ?? "the newest booking"}`;
  return {
    refused: `walk ${stream}: ${step.message}; stopped with the checkpoint unmoved (the next run ${next})`,
    restart,
  };
}

/** Whether an instant falls in the milliseconds `from` to `to`. */
function inMillis(at: string, from: string, to: string): boolean {
  const ms = millisOf(at);
  return ms >= from && ms <= to;
}
