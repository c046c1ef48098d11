/** `sync_runs` in Postgres: the twin of ../runs.ts. */
import type { RunFinish, RunStart } from "../../sync/ports.js";
import type { Query } from "./sql.js";

export async function startRun(query: Query, run: RunStart): Promise<number> {
  const [row] = await query<{ id: number }>(
    `INSERT INTO sync_runs (kind, stream, started_at, status, checkpoint_before)
    VALUES ($1, $2, $3, 'running', $4) RETURNING id`,
    [run.kind, run.stream, run.startedAt, run.checkpointBefore],
  );
  return Number(row?.id);
}

export async function finishRun(query: Query, id: number, r: RunFinish): Promise<void> {
  await query(
    `UPDATE sync_runs SET status = $2, finished_at = $3, pages = $4, requests = $5, retries = $6,
      bookings_new = $7, bookings_updated = $8, bookings_unchanged = $9, rejects = $10,
      checkpoint_after = $11, error = $12, gaps_found = $13, bookings_repaired = $14
    WHERE id = $1`,
    [
      id,
      r.status,
      r.finishedAt,
      r.pages,
      r.requests,
      r.retries,
      r.inserted,
      r.updated,
      r.unchanged,
      r.rejected,
      r.checkpointAfter,
      r.error,
      r.gapsFound ?? 0,
      r.repaired ?? 0,
    ],
  );
}

export async function recordDrift(query: Query, runId: number, source: number, local: number): Promise<void> {
  await query("UPDATE sync_runs SET source_total = $1, local_total = $2 WHERE id = $3", [
    source,
    local,
    runId,
  ]);
}

/** Marks every run still `running` as `interrupted`; only the lease holder calls it. */
export async function markInterruptedRuns(query: Query, at: string): Promise<number[]> {
  const note = "interrupted: its process stopped before the run finished (killed, or the machine stopped)";
  const rows = await query<{ id: number }>(
    `UPDATE sync_runs SET status = 'interrupted', finished_at = $1, error = coalesce(error, $2)
    WHERE status = 'running' RETURNING id`,
    [at, note],
  );
  return rows.map((r) => r.id).sort((a, b) => a - b);
}
