/** Pages as the window (src/sync/feed/window.ts) judges them, for its table and its properties. */
import { readSourceTime } from "../../src/api/times.js";
import type { PageFacts } from "../../src/sync/feed/window.js";

/** Instant of second `s` (plus `us` microseconds) on a fixed day. */
export const T = (s: number, us = 0) =>
  (
    readSourceTime(`2026-01-01T00:00:${String(s).padStart(2, "0")}.${String(us).padStart(6, "0")}Z`) as {
      instant: string;
    }
  ).instant;

export const r = (id: string, at: string) => ({ id, at });

/** Records at those seconds, newest first, with ids `b<place>-<second>`. */
export const page = (...secs: number[]) => secs.map((s, i) => r(`b${i}-${s}`, T(s)));

/** The facts of a first page of three asked for, nothing owed; each test sets what it judges. */
export const base: PageFacts = {
  upTo: null,
  anchor: null,
  fallback: null,
  limit: 3,
  records: [],
  count: 0,
  hasMore: false,
  floor: null,
};
