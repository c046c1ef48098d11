/**
 * Reads a source time strictly (ISO 8601 with a zone, a real date), by arithmetic rather than
 * `Date.parse`, which rolls 30 February over and reads a zone-less time in the worker's `TZ`.
 */
export interface SourceTime {
  /** UTC with nine fraction digits, e.g. `2026-11-20T09:00:00.123456000Z`. */
  instant: string;
  /** UTC with milliseconds, truncated, e.g. `2026-11-20T09:00:00.123Z`. */
  createdAt: string;
}

const ISO =
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?(?:(Z)|([+-])(\d{2}):?(\d{2}))$/i;

function daysIn(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/** Why `text` is not a source time, in words for a reject's reason; null when it is one. */
export function whyNotSourceTime(text: unknown): string | null {
  if (readSourceTime(text) !== null) return null;
  if (typeof text !== "string") return "is not a string";
  if (ISO_NO_ZONE.test(text)) return "has no zone (Z or ±hh:mm): its time would depend on the reader's";
  if (ISO.test(text)) return "is not a real calendar date and time";
  return "is not an ISO 8601 time";
}

const ISO_NO_ZONE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?$/;

/** The time `text` names, or null when it is not ISO 8601 with a zone, or names no real time. */
export function readSourceTime(text: unknown): SourceTime | null {
  if (typeof text !== "string") return null;
  // The form almost every source time has, read ten times faster: a text that `toISOString` writes
  // back exactly is a real UTC time with milliseconds (years 0001-9999), as the arithmetic below finds.
  if (text.length === 24 && text >= "0001") {
    const ms = Date.parse(text);
    if (!Number.isNaN(ms) && new Date(ms).toISOString() === text)
      return { instant: `${text.slice(0, -1)}000000Z`, createdAt: text };
  }
  const m = ISO.exec(text);
  if (!m) return null;
  // The pattern admits digits only, so every field is a number.
  const n = (k: number) => Number(m[k] ?? 0);
  const [year, month, day, hour, minute, second] = [n(1), n(2), n(3), n(4), n(5), n(6)];
  const dateOk = year >= 1 && month >= 1 && month <= 12 && day >= 1 && day <= daysIn(year, month);
  if (!dateOk || hour > 23 || minute > 59 || second > 59) return null;
  let offsetMinutes = 0;
  if (!m[8]) {
    const oh = Number(m[10]);
    const om = Number(m[11]);
    if (oh > 23 || om > 59) return null;
    offsetMinutes = (m[9] === "-" ? -1 : 1) * (oh * 60 + om);
  }
  const fraction = (m[7] ?? "").padEnd(9, "0");
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute - offsetMinutes, second, Number(fraction.slice(0, 3)));
  const ms = date.getTime();
  // Outside the years toISOString writes with four digits, text order would not be time order.
  if (!Number.isFinite(ms) || date.getUTCFullYear() < 1 || date.getUTCFullYear() > 9999) return null;
  const createdAt = date.toISOString();
  return { instant: `${createdAt.slice(0, -1)}${fraction.slice(3)}Z`, createdAt };
}
