/**
 * What `status` and the status page show of the mirror's source and of missing marks a reconcile
 * withheld: two rows of `sync_state` that are not walks, read in the status's snapshot.
 */
import { WITHHELD_STREAM, type WithheldMarks } from "../sync/list/missing-share.js";
import { isSourceRecord, SOURCE_STREAM, type SourceRecord } from "../sync/source.js";
import type { MirrorReader } from "./snapshot.js";

/** The `sync_state` streams that hold records rather than a walk's position: not listed as streams. */
export const RECORD_STREAMS: readonly string[] = [SOURCE_STREAM, WITHHELD_STREAM];

/** A source record this version did not write (edited by hand): the next command remembers the source anew. */
export interface UnreadableSource {
  unreadable: true;
}

export interface SourceState {
  /** The source the mirror mirrors (base URL, the bookings it is remembered by); null before the first command. */
  source: SourceRecord | UnreadableSource | null;
  /** Missing marks a reconcile withheld, waiting for `reconcile --apply-missing`; null when none are. */
  reconcileWithheld: WithheldMarks | null;
}

export async function readSourceState(db: MirrorReader): Promise<SourceState> {
  const rows = await db.all<{ stream: string; progress: string | null }>(
    `SELECT stream, progress_json AS progress FROM sync_state WHERE stream IN ($1, $2)`,
    [SOURCE_STREAM, WITHHELD_STREAM],
  );
  const value = (stream: string): unknown => {
    const text = rows.find((r) => r.stream === stream)?.progress;
    if (!text) return null;
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return undefined;
    }
  };
  const source = value(SOURCE_STREAM);
  return {
    source: source === null ? null : isSourceRecord(source) ? source : { unreadable: true },
    reconcileWithheld: (value(WITHHELD_STREAM) ?? null) as WithheldMarks | null,
  };
}
