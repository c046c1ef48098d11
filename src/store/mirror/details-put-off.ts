/**
 * The details pass's write, for both databases: bookings a finished pass read past on list-bookings
 * without finding them are put off, each miss twice as long (the pass says until when), so one
 * booking the source deleted does not send every later pass down the list to it. Never a delete,
 * and no `missing_since`: that is reconcile's to judge.
 */
import type { DetailsPutOff } from "../../sync/ports.js";
import { type Ask, asking } from "./ask.js";
import type { Dialect } from "./dialect.js";

/** The statement putting off bookings a details pass did not find; answers how many it put off. */
export function detailsPutOffSql(d: Dialect) {
  const mark = d.marks(`UPDATE bookings SET details_misses = ?, details_seek_after = ?
    WHERE ${d.oneOf("id")} AND (detail_synced_at IS NULL OR summary_synced_at > detail_synced_at)
    RETURNING id`);
  return {
    putOffDetails: (m: DetailsPutOff): Ask<number> =>
      asking(mark, [m.misses, m.seekAfter, d.list(m.ids)], (rows) => rows.length),
  };
}
