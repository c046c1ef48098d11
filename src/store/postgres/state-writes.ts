/** Writes every page may carry besides its rows: changes, rejects and the stream's progress. */
import { createHash } from "node:crypto";
import type { Progress, Reject } from "../../sync/ports.js";
import { changedColumns, type trackedIn } from "../changes.js";
import type { Param } from "../rows.js";
import { insertRows, type Query } from "./sql.js";

/** A row of `booking_changes` without its run: booking, field, old and new value, when observed. */
export type Change = [
  bookingId: string,
  field: string,
  oldValue: string | null,
  newValue: string | null,
  at: string,
];

/** The changes of booking `id` observed at `at`: its tracked columns whose values differ from `before`. */
export function changedFields(
  id: string,
  tracked: ReturnType<typeof trackedIn>,
  before: Record<string, unknown>,
  values: readonly Param[],
  offset: number,
  at: string,
  clean: boolean,
): Change[] {
  return changedColumns(tracked, before, values, offset, clean).map(([column, old, now]) => [
    id,
    column,
    old,
    now,
    at,
  ]);
}

/** Records changes observed by run `runId` (null when none is recorded or it is unknown). */
export async function insertChanges(query: Query, changes: Change[], runId: number | null): Promise<void> {
  if (changes.length === 0) return;
  const run = await knownRun(query, runId);
  const head = "INSERT INTO booking_changes (booking_id, field, old_value, new_value, observed_at, run_id)";
  await insertRows(
    query,
    head,
    changes.map((c) => [...c, run]),
  );
}

/** Quarantines rejects; one already stored (same raw JSON) is left as it is. */
export async function insertRejects(
  query: Query,
  rejects: readonly Reject[],
  endpoint: "feed" | "list",
  runId: number | null,
  at: string,
): Promise<void> {
  if (rejects.length === 0) return;
  // An unknown run id is stored as null rather than failing the whole page on the foreign key.
  const run = await knownRun(query, runId);
  const rows = rejects.map((r) => {
    // `undefined` has no JSON form; storing "null" keeps the row and its reason.
    const rawJson = JSON.stringify(r.raw) ?? "null";
    const sha = createHash("sha256").update(rawJson).digest("hex");
    return [run, endpoint, r.id, r.createdAt, r.reason, rawJson, sha, at];
  });
  const head = `INSERT INTO rejected_records (run_id, endpoint, booking_id, created_at, reason, raw_json,
    raw_sha256, first_seen_at)`;
  await insertRows(query, head, rows, "ON CONFLICT (raw_sha256) DO NOTHING");
}

/** Sets the stream's progress (null clears it) and, when given, its checkpoint (never backwards). */
export async function writeProgress(query: Query, progress: Progress, at: string): Promise<void> {
  const { stream, value, checkpoint } = progress;
  const json = value === null || value === undefined ? null : JSON.stringify(value);
  // ISO 8601 UTC text compares in time order under the C collation, whatever the database's.
  await query(
    `INSERT INTO sync_state (stream, checkpoint, progress_json, updated_at) VALUES ($1, $2, $3, $4)
    ON CONFLICT (stream) DO UPDATE SET
      progress_json = excluded.progress_json,
      checkpoint = CASE
        WHEN excluded.checkpoint IS NULL THEN sync_state.checkpoint
        WHEN sync_state.checkpoint IS NULL THEN excluded.checkpoint
        ELSE greatest(sync_state.checkpoint COLLATE "C", excluded.checkpoint COLLATE "C")
      END,
      updated_at = excluded.updated_at`,
    [stream, checkpoint ?? null, json, at],
  );
}

async function knownRun(query: Query, runId: number | null): Promise<number | null> {
  if (runId === null) return null;
  const found = await query<{ id: number }>("SELECT id FROM sync_runs WHERE id = $1", [runId]);
  return found[0]?.id ?? null;
}
