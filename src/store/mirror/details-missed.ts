/**
 * The details pass's write, for both databases: bookings it looked for on list-bookings, past their
 * place and then by their time, and did not find. Their details are not sought again until their
 * summary changes (reads.ts), so one booking deleted at the source does not send every later pass
 * down the list to it. Never a delete, and no `missing_since`: that is reconcile's to judge.
 */
import type { Dialect } from "./dialect.js";
import { type Ask, asking } from "./unlisted.js";

/** The statement marking `ids` (those still without current details) as looked for at `at`; answers how many. */
export function detailsMissedSql(d: Dialect) {
  const mark = d.marks(`UPDATE bookings SET details_missed_at = ?
    WHERE ${d.oneOf("id")} AND (detail_synced_at IS NULL OR summary_synced_at > detail_synced_at)
    RETURNING id`);
  return {
    markDetailsMissed: (ids: readonly string[], at: string): Ask<number> =>
      asking(mark, [at, d.list(ids)], (rows) => rows.length),
  };
}
