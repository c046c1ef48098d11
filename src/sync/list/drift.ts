/**
 * The source's total against the mirror's, the one way every pass reads them: a list page of one
 * (its requests counted, not a page: no booking of it is stored) against `countAccounted`, the rows
 * not marked missing.
 */
import type { RunCounters, SyncDeps } from "../ports.js";

export interface Drift {
  sourceTotal: number;
  localTotal: number;
}

/** The source's total (of one platform when given) from a list page of one. */
export async function sourceTotal(
  deps: SyncDeps<unknown>,
  counters: RunCounters,
  sourcePlatform?: string,
): Promise<number> {
  const page = await deps.api.listBookings({ page: 1, pageSize: 1, sourcePlatform }, deps.signal);
  counters.requests += page.attempts;
  counters.retries += page.attempts - 1;
  return page.total;
}

/**
 * Reads both totals and records them on run `runId`; `known` is the source's total read earlier in
 * the run (fill/behind.ts), which saves the request. Throws when the request fails.
 */
export async function checkDrift(
  deps: SyncDeps,
  runId: number,
  counters: RunCounters,
  known?: number,
): Promise<Drift> {
  const drift = {
    sourceTotal: known ?? (await sourceTotal(deps, counters)),
    localTotal: await deps.store.countAccounted(),
  };
  await deps.store.recordDrift(runId, drift.sourceTotal, drift.localTotal);
  const fields = { ...drift, difference: drift.sourceTotal - drift.localTotal };
  if (fields.difference === 0)
    deps.logger.debug(fields, "drift check: the mirror holds as many bookings as the source");
  else deps.logger.info(fields, "drift check: the mirror and the source hold different numbers of bookings");
  return drift;
}
