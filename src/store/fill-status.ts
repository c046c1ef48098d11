/**
 * How far a fill has got and when it should end, read from a stream's stored progress for `status`,
 * the status page and /readyz. The stored JSON is read defensively: an earlier version's walk, a
 * hand-edited row or garbage is "no fill", never a failed status.
 */
import { isFill } from "../sync/fill/progress.js";

/** A fill in progress, as the status reads show it; times are ISO 8601 UTC. */
export interface FillStatus {
  /** Pages read of the pages planned, whole percent rounded down, at most 99: a fill is stored only until it ends. */
  percent: number;
  /** Pages read so far (feed and list), across resumes. */
  pages: number;
  /** Pages the whole fill should take, as estimated when it planned them. */
  plannedPages: number;
  /** Time slices of the feed not yet walked to their end. */
  slicesLeft: number;
  /** Time slices planned when the fill began. */
  sliceCount: number;
  /** When the fill began; null when the stored time is not one. */
  startedAt: string | null;
  /** When its state was last saved (with its last page); null when the stored time is not one. */
  savedAt: string | null;
  /** When it should end at the rate of its current run; null until it can tell. */
  etaAt: string | null;
  /** Seconds from the status's time to `etaAt`, negative once it has passed; null without `etaAt`. */
  etaSeconds: number | null;
}

/**
 * The fill stored as `progress` (its JSON text, or the value already parsed), as of `now`; null when
 * it is none, an everyday walk, or is not one that can be shown (a count that is not a count, slices
 * that are not a list).
 */
export function fillStatus(progress: unknown, now: Date): FillStatus | null {
  const value = typeof progress === "string" ? parseJson(progress) : progress;
  if (!isFill(value)) return null;
  const { pages, plannedPages, sliceCount, slices } = value as unknown as Record<string, unknown>;
  if (!isCount(pages) || !isCount(plannedPages) || !isCount(sliceCount) || !Array.isArray(slices))
    return null;
  // An everyday walk is stored in the same form, as one slice reading no details: no fill to show.
  if (sliceCount <= 1 && value.details === null) return null;
  const etaAt = isoTime(value.etaAt);
  return {
    percent: plannedPages > 0 ? Math.min(99, Math.floor((pages * 100) / plannedPages)) : 0,
    pages,
    plannedPages,
    slicesLeft: slices.length,
    sliceCount,
    startedAt: isoTime(value.startedAt),
    savedAt: isoTime(value.savedAt),
    etaAt,
    etaSeconds: etaAt === null ? null : Math.round((Date.parse(etaAt) - now.getTime()) / 1000),
  };
}

/**
 * One line for people: "42% · 420 of 1000 pages · 3 of 8 slices left · ends about
 * 2026-03-01T10:12:00.000Z (in 12 min)". `when` writes the time (the status page's own form, say).
 */
export function fillText(fill: FillStatus, when: (iso: string) => string = (iso) => iso): string {
  const head = `${fill.percent}% · ${fill.pages} of ${fill.plannedPages} pages · ${fill.slicesLeft} of ${fill.sliceCount} slices left`;
  if (fill.etaAt === null || fill.etaSeconds === null) return `${head} · end not known yet`;
  return `${head} · ends about ${when(fill.etaAt)} (${etaWords(fill.etaSeconds)})`;
}

/** "in 12 min" (rounded up, so never "in 0 min"), "due now", or "5 min overdue" for a fill that fell behind. */
export function etaWords(seconds: number): string {
  if (seconds > 0) return `in ${Math.ceil(seconds / 60)} min`;
  return seconds > -60 ? "due now" : `${Math.floor(-seconds / 60)} min overdue`;
}

/** Stored JSON text's value; undefined when it is not JSON (a hand-edited row, say). */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function isCount(n: unknown): n is number {
  return typeof n === "number" && Number.isSafeInteger(n) && n >= 0;
}

/** A stored time as `toISOString` writes it, or null: nothing but a real time reaches the output. */
function isoTime(value: unknown): string | null {
  if (typeof value !== "string" || !/^\d{4}-\d\d-\d\dT/.test(value)) return null;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? null : new Date(ms).toISOString();
}
