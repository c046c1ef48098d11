/** Writes shared by feed and list pages (`sync_state`, `rejected_records`), in the caller's transaction. */
import { createHash } from "node:crypto";
import type Database from "better-sqlite3";
import type { Progress, Reject } from "../sync/ports.js";

export interface StateWriter {
  /** Sets the stream's progress (null clears it) and, when given, its checkpoint (never backwards). */
  writeProgress(progress: Progress, at: string): void;
  /** Quarantines rejects; one already stored (same raw JSON) is left as it is. Returns how many were new. */
  insertRejects(
    rejects: readonly Reject[],
    endpoint: "feed" | "list",
    runId: number | null,
    at: string,
  ): number;
}

/** Prepares the shared statements once per connection. */
export function stateWriter(db: Database.Database): StateWriter {
  // ISO 8601 UTC text compares in time order, so max() on text is the newer checkpoint.
  const upsertState = db.prepare(`
    INSERT INTO sync_state (stream, checkpoint, progress_json, updated_at)
    VALUES (@stream, @checkpoint, @progress, @at)
    ON CONFLICT (stream) DO UPDATE SET
      progress_json = excluded.progress_json,
      checkpoint = CASE
        WHEN excluded.checkpoint IS NULL THEN sync_state.checkpoint
        WHEN sync_state.checkpoint IS NULL THEN excluded.checkpoint
        ELSE max(sync_state.checkpoint, excluded.checkpoint)
      END,
      updated_at = excluded.updated_at`);
  // An unknown run id is stored as null rather than failing the whole page on the foreign key.
  const insertReject = db.prepare(`
    INSERT INTO rejected_records (run_id, endpoint, booking_id, created_at, reason, raw_json, raw_sha256, first_seen_at)
    VALUES ((SELECT id FROM sync_runs WHERE id = @runId), @endpoint, @bookingId, @createdAt, @reason, @rawJson, @sha, @at)
    ON CONFLICT (raw_sha256) DO NOTHING`);
  return {
    writeProgress({ stream, value, checkpoint }, at) {
      const json = value === null || value === undefined ? null : JSON.stringify(value);
      upsertState.run({ stream, checkpoint: checkpoint ?? null, progress: json, at });
    },
    insertRejects(rejects, endpoint, runId, at) {
      let added = 0;
      for (const r of rejects) {
        // `undefined` has no JSON form; storing "null" keeps the row and its reason.
        const rawJson = JSON.stringify(r.raw) ?? "null";
        const sha = createHash("sha256").update(rawJson).digest("hex");
        const row = {
          runId,
          endpoint,
          bookingId: r.id,
          createdAt: r.createdAt,
          reason: r.reason,
          rawJson,
          sha,
          at,
        };
        added += insertReject.run(row).changes;
      }
      return added;
    },
  };
}
