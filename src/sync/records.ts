/** A page's records as the store takes them: the valid ones, and the rejects to quarantine (logged). */
import type { Checked, Logger, Reject } from "./ports.js";

/** The valid records of a page and its rejects, each logged with where it came from. */
export function splitRecords<T>(
  page: readonly Checked<T>[],
  logger: Logger,
  where: object,
): { records: Array<Extract<Checked<T>, { ok: true }>>; rejects: Reject[] } {
  const records: Array<Extract<Checked<T>, { ok: true }>> = [];
  const rejects: Reject[] = [];
  for (const r of page) {
    if (r.ok) records.push(r as Extract<Checked<T>, { ok: true }>);
    else {
      rejects.push(r);
      logger.warn({ ...where, id: r.id, reason: r.reason }, "record rejected and quarantined");
    }
  }
  return { records, rejects };
}
