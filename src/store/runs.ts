/** `sync_runs`: a run killed part-way stays `running` until the next writer marks it `interrupted`. */
import type Database from "better-sqlite3";
import { desc, eq } from "drizzle-orm";
import type { BetterSQLite3Database } from "drizzle-orm/better-sqlite3";
import type { RunFinish, RunKind, RunStart } from "../sync/ports.js";
import type * as schema from "./schema.js";
import { syncRuns } from "./schema.js";

/** A row of `sync_runs` as drizzle reads it (camelCase keys). */
export type RunRow = typeof syncRuns.$inferSelect;

/**
 * Marks every run still `running` as `interrupted` and returns their ids. Only the writer lease's
 * holder may call it: any other run left `running` belongs to a process that died or lost the lease.
 */
export function markInterruptedRuns(db: Database.Database, at: string): number[] {
  const mark = db.prepare<[string, string], { id: number }>(`
    UPDATE sync_runs SET status = 'interrupted', finished_at = ?,
      error = coalesce(error, ?)
    WHERE status = 'running' RETURNING id`);
  const note = "interrupted: its process stopped before the run finished (killed, or the machine stopped)";
  return mark
    .all(at, note)
    .map((r) => r.id)
    .sort((a, b) => a - b);
}

export interface Runs {
  /** Records the start of a run with status `running`; returns its id. */
  startRun(run: RunStart): number;
  /** Records how a run ended: status, counters, checkpoint and error. */
  finishRun(id: number, result: RunFinish): void;
  /** Records a drift check's totals on a run: the source's count and the mirror's matching count. */
  recordDrift(runId: number, sourceTotal: number, localTotal: number): void;
  /** The newest run, of the given kind when one is given. */
  lastRun(kind?: RunKind): RunRow | undefined;
  /** The newest `n` runs, newest first. */
  recentRuns(n: number): RunRow[];
}

/** Prepares the run statements once per connection. */
export function runs(db: Database.Database, orm: BetterSQLite3Database<typeof schema>): Runs {
  const start = db.prepare(`
    INSERT INTO sync_runs (kind, stream, started_at, status, checkpoint_before)
    VALUES (@kind, @stream, @startedAt, 'running', @checkpointBefore)`);
  const finish = db.prepare(`
    UPDATE sync_runs SET status = @status, finished_at = @finishedAt, pages = @pages, requests = @requests,
      retries = @retries, bookings_new = @inserted, bookings_updated = @updated,
      bookings_unchanged = @unchanged, rejects = @rejected, checkpoint_after = @checkpointAfter, error = @error,
      gaps_found = @gapsFound, bookings_repaired = @repaired
    WHERE id = @id`);
  const drift = db.prepare("UPDATE sync_runs SET source_total = ?, local_total = ? WHERE id = ?");
  return {
    startRun(run) {
      const { kind, stream, startedAt, checkpointBefore } = run;
      return Number(start.run({ kind, stream, startedAt, checkpointBefore }).lastInsertRowid);
    },
    finishRun(id, r) {
      finish.run({
        id,
        status: r.status,
        finishedAt: r.finishedAt,
        pages: r.pages,
        requests: r.requests,
        retries: r.retries,
        inserted: r.inserted,
        updated: r.updated,
        unchanged: r.unchanged,
        rejected: r.rejected,
        checkpointAfter: r.checkpointAfter,
        error: r.error,
        gapsFound: r.gapsFound ?? 0,
        repaired: r.repaired ?? 0,
      });
    },
    recordDrift(runId, sourceTotal, localTotal) {
      drift.run(sourceTotal, localTotal, runId);
    },
    lastRun(kind) {
      const query = orm.select().from(syncRuns);
      return (kind ? query.where(eq(syncRuns.kind, kind)) : query).orderBy(desc(syncRuns.id)).limit(1).get();
    },
    recentRuns(n) {
      return orm.select().from(syncRuns).orderBy(desc(syncRuns.id)).limit(n).all();
    },
  };
}
