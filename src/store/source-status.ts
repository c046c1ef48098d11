/**
 * What `status` and the status page show of the mirror's source and of missing marks a reconcile
 * withheld: two rows of `sync_state` that are not walks, read in the status's snapshot.
 */
import { WITHHELD_STREAM, type WithheldMarks } from "../sync/list/missing-share.js";
import { SOURCE_STREAM, type SourceRecord } from "../sync/source.js";
import type { MirrorReader } from "./snapshot.js";

/** The `sync_state` streams that hold records rather than a walk's position: not listed as streams. */
export const RECORD_STREAMS: readonly string[] = [SOURCE_STREAM, WITHHELD_STREAM];

export interface SourceState {
  /** The source the mirror mirrors (base URL, the bookings it is remembered by); null before the first command. */
  source: SourceRecord | null;
  /** Missing marks a reconcile withheld, waiting for `reconcile --apply-missing`; null when none are. */
  reconcileWithheld: WithheldMarks | null;
}

export async function readSourceState(db: MirrorReader): Promise<SourceState> {
  const rows = await db.all<{ stream: string; progress: string | null }>(
    `SELECT stream, progress_json AS progress FROM sync_state WHERE stream IN ($1, $2)`,
    [SOURCE_STREAM, WITHHELD_STREAM],
  );
  const value = <T>(stream: string): T | null => {
    const text = rows.find((r) => r.stream === stream)?.progress;
    return text ? (JSON.parse(text) as T) : null;
  };
  return {
    source: value<SourceRecord>(SOURCE_STREAM),
    reconcileWithheld: value<WithheldMarks>(WITHHELD_STREAM),
  };
}
