/** A page's records as the store takes them: the ones that steer, and the rejects (logged). */
import type { Awaitable, Checked, Logger, Progress, Reject, SyncStore, UpsertCounts } from "./ports.js";

/** Saves a stream's progress alone, as a page without records: made durable in order with the pages. */
export function saveProgress(
  store: Pick<SyncStore, "save">,
  progress: Progress,
  syncedAt: string,
): Awaitable<UpsertCounts> {
  return store.save({ source: "list", records: [], rejects: [], progress, syncedAt });
}

/**
 * The steering records of a page and its rejects, each record with problems logged with where it
 * came from: a reject with a usable `_id` is still stored as a booking, the rest are quarantined.
 */
export function splitRecords<T>(
  page: readonly Checked<T>[],
  logger: Logger,
  where: object,
): { records: Array<Extract<Checked<T>, { ok: true }>>; rejects: Reject[] } {
  const records: Array<Extract<Checked<T>, { ok: true }>> = [];
  const rejects: Reject[] = [];
  for (const r of page) {
    if (r.ok) {
      records.push(r as Extract<Checked<T>, { ok: true }>);
      if (r.problems.length > 0)
        logger.warn({ ...where, id: r.id, problems: r.problems.slice(0, 3) }, "booking stored with problems");
    } else {
      rejects.push(r);
      const what =
        r.booking !== undefined ? "booking stored with problems; it steers nothing" : "record quarantined";
      logger.warn({ ...where, id: r.id, reason: r.reason }, what);
    }
  }
  return { records, rejects };
}
