/** The counters every run keeps, shared by the feed walk, details, backfill and reconcile. */
import type { RunCounters } from "./ports.js";

/** All counters at zero. */
export function zeroCounters(): RunCounters {
  return { pages: 0, requests: 0, retries: 0, inserted: 0, updated: 0, unchanged: 0, rejected: 0 };
}

/** A finished run's counters as log fields, named as the summaries name them. */
export function runLogFields(r: RunCounters & { runId: number; status: string; durationMs: number }) {
  return {
    runId: r.runId,
    status: r.status,
    new: r.inserted,
    updated: r.updated,
    unchanged: r.unchanged,
    rejected: r.rejected,
    pages: r.pages,
    requests: r.requests,
    retries: r.retries,
    durationMs: r.durationMs,
  };
}
