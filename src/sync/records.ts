/** A page's records as the store takes them: the ones that steer, and the rejects (logged). */
import type { Checked, Logger, Progress, Reject, SyncStore, Valid } from "./ports.js";

/** Saves a stream's progress alone, as a page without records: made durable in order with the pages. */
export function saveProgress(store: Pick<SyncStore, "save">, progress: Progress, syncedAt: string) {
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
): { records: Valid<T>[]; rejects: Reject[] } {
  const records: Valid<T>[] = [];
  const rejects: Reject[] = [];
  for (const r of page) {
    if (r.ok) {
      records.push(r);
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
