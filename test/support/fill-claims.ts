/**
 * What a saved fill claims, checked against the rows committed beside it (invariant 3: rows and
 * progress commit together). A booking is claimed stored when it lies above the fill's floor and in
 * no unfinished slice's `[floor, upTo]`; it is claimed detailed when it sits on a details page the
 * fill counts read. Checked against a source that did not change since the fill began.
 */
import type { SimSummaryBooking, Simulator } from "../../src/simulator/index.js";
import { instantOf } from "../../src/sync/feed/window.js";
import type { FillProgress } from "../../src/sync/fill/progress.js";
import { analyst } from "./harness.js";

/** What the mirror committed: every id, and the ids with details. */
export interface Committed {
  ids: Set<string>;
  detailed: Set<string>;
}

/** The rows a SQLite mirror committed, through a connection of its own. */
export function committedRows(dbPath: string): Committed {
  const db = analyst(dbPath);
  try {
    const rows = db.prepare("SELECT id, detail_json IS NOT NULL AS d FROM bookings").all() as Array<{
      id: string;
      d: number;
    }>;
    return {
      ids: new Set(rows.map((r) => r.id)),
      detailed: new Set(rows.filter((r) => r.d).map((r) => r.id)),
    };
  } finally {
    db.close();
  }
}

/** Ids the fill claims stored that are not, and ids it claims detailed that have no details. */
export interface Unbacked {
  rows: string[];
  details: string[];
  /** How many bookings the fill claimed stored and detailed: a check that claimed nothing proves nothing. */
  claimed: { rows: number; details: number };
}

/** The claims of `fill` that the committed rows do not back, against the source `sim` serves now. */
export function unbackedClaims(fill: FillProgress, sim: Simulator, committed: Committed): Unbacked {
  const out: Unbacked = { rows: [], details: [], claimed: { rows: 0, details: 0 } };
  for (const b of sim.allSummaries()) {
    if (!claimedStored(fill, instantOf(b.createdAt))) continue;
    out.claimed.rows++;
    if (!committed.ids.has(b._id)) out.rows.push(b._id);
  }
  const details = fill.details;
  if (details === null) return out;
  const list: SimSummaryBooking[] = sim.allSummaries(
    details.sourcePlatform === undefined ? {} : { sourcePlatform: details.sourcePlatform },
  );
  for (const [from, to] of details.read)
    for (const b of list.slice((from - 1) * details.pageSize, to * details.pageSize)) {
      out.claimed.details++;
      if (!committed.detailed.has(b._id)) out.details.push(b._id);
    }
  return out;
}

/** Whether the fill says the booking created at `at` (an instant) is stored. */
function claimedStored(fill: FillProgress, at: string): boolean {
  // A fill of one platform's list pages walks no feed, so it claims no slice.
  if (fill.sliceCount === 0) return false;
  if (fill.floor !== null && at < fill.floor) return false;
  return fill.slices.every(
    (s) => !((s.floor === null || at >= s.floor) && (s.upTo === null || at <= s.upTo)),
  );
}
