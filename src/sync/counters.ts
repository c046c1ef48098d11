/** The counters every run keeps, shared by the feed walk, details, backfill and reconcile. */
import { ApiError } from "../errors.js";
import type { RunCounters, UpsertCounts } from "./ports.js";

/** All counters at zero. */
export function zeroCounters(): RunCounters {
  return { pages: 0, requests: 0, retries: 0, inserted: 0, updated: 0, unchanged: 0, rejected: 0 };
}

/** A request that failed still cost its attempts; adds them to `counters`. */
export function countFailedAttempts(counters: Pick<RunCounters, "requests" | "retries">, err: unknown): void {
  const attempts = err instanceof ApiError ? err.attempts : undefined;
  if (!attempts) return;
  counters.requests += attempts;
  counters.retries += attempts - 1;
}

/** What a read costs: pages, and the requests (retries among them) they took. */
export type ReadCounts = Pick<RunCounters, "pages" | "requests" | "retries">;

/** A page read: one more page, and the attempts it took. */
export function countPage(counters: ReadCounts, attempts: number): void {
  counters.pages++;
  counters.requests += attempts;
  counters.retries += attempts - 1;
}

/** A saved page's counts, added to a run's. */
export function addCounts(counters: UpsertCounts, counts: UpsertCounts): void {
  for (const k of ["inserted", "updated", "unchanged", "rejected"] as const) counters[k] += counts[k];
}
