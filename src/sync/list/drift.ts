/** The cheap drift check: the source's total from a page of one against the mirror's, recorded on the run. */
import type { SyncDeps } from "../ports.js";

export interface Drift {
  sourceTotal: number;
  localTotal: number;
  /** HTTP attempts the request took. */
  attempts: number;
}

/**
 * Reads both totals and records them on run `runId`; `known` is the source's total read earlier in
 * the run (fill/behind.ts), which saves the request. Throws when the request fails.
 */
export async function checkDrift(
  deps: SyncDeps,
  runId: number,
  known?: { total: number; attempts: number },
): Promise<Drift> {
  const page = known ?? (await deps.api.listBookings({ page: 1, pageSize: 1 }, deps.signal));
  const localTotal = await deps.store.countBookings({ excludeMissing: true });
  await deps.store.recordDrift(runId, page.total, localTotal);
  const drift = { sourceTotal: page.total, localTotal, difference: page.total - localTotal };
  if (drift.difference === 0)
    deps.logger.debug(drift, "drift check: the mirror holds as many bookings as the source");
  else deps.logger.info(drift, "drift check: the mirror and the source hold different numbers of bookings");
  return { sourceTotal: page.total, localTotal, attempts: page.attempts };
}
