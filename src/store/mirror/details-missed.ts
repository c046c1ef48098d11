/**
 * The details pass's write, for both databases: bookings it looked for on list-bookings, past their
 * place and then by their time, and did not find. Their details are not sought again for a day
 * unless their summary changes (reads.ts), so one booking deleted at the source does not send every
 * later pass down the list to it. Never a delete, and no `missing_since`: that is reconcile's to judge.
 */
import type { DetailsMissed } from "../../sync/ports.js";
import type { Dialect } from "./dialect.js";
import { type Ask, asking } from "./unlisted.js";

/** The statement marking bookings a details pass did not find; answers how many it marked. */
export function detailsMissedSql(d: Dialect) {
  const mark = d.marks(`UPDATE bookings SET details_missed_at = ?
    WHERE ${d.oneOf("id")} AND (detail_synced_at IS NULL OR summary_synced_at > detail_synced_at)
      AND first_seen_at < ?
    RETURNING id`);
  return {
    markDetailsMissed: (m: DetailsMissed): Ask<number> =>
      asking(mark, [m.at, d.list(m.ids), m.firstSeenBefore], (rows) => rows.length),
  };
}
