/**
 * `sync_runs`, written once for both databases: a run killed part-way stays `running` until the
 * next writer marks it `interrupted`.
 */
import { getTableColumns } from "drizzle-orm";
import type { RunFinish, RunKind, RunStart } from "../sync/ports.js";
import { type Ask, asking } from "./mirror/ask.js";
import type { Dialect } from "./mirror/dialect.js";
import { syncRuns } from "./schema.js";

/** A row of `sync_runs` as the stores read it (camelCase keys). */
export type RunRow = typeof syncRuns.$inferSelect;

/** Every column under its camelCase name. */
const ROW = Object.entries(getTableColumns(syncRuns))
  .map(([key, column]) => `${column.name} AS "${key}"`)
  .join(", ");

const INTERRUPTED =
  "interrupted: its process stopped before the run finished (killed, or the machine stopped)";

const none = () => undefined;

/** The run statements in dialect `d`. */
export function runSql(d: Dialect) {
  const start = d.marks(`INSERT INTO sync_runs (kind, stream, started_at, status, checkpoint_before)
    VALUES (?, ?, ?, 'running', ?) RETURNING id`);
  const finish = d.marks(`UPDATE sync_runs SET status = ?, finished_at = ?, pages = ?, requests = ?,
      retries = ?, bookings_new = ?, bookings_updated = ?, bookings_unchanged = ?, rejects = ?,
      checkpoint_after = ?, error = ?, gaps_found = ?, bookings_repaired = ?
    WHERE id = ? RETURNING id`);
  const drift = d.marks("UPDATE sync_runs SET source_total = ?, local_total = ? WHERE id = ? RETURNING id");
  const interrupt =
    d.marks(`UPDATE sync_runs SET status = 'interrupted', finished_at = ?, error = coalesce(error, ?)
    WHERE status = 'running' RETURNING id`);
  const newest = (where: string) => d.marks(`SELECT ${ROW} FROM sync_runs ${where} ORDER BY id DESC LIMIT ?`);
  const [ofKind, ofAny] = [newest("WHERE kind = ?"), newest("")];
  return {
    /** Records the start of a run with status `running`; answers its id. */
    startRun: (r: RunStart) =>
      asking(start, [r.kind, r.stream, r.startedAt, r.checkpointBefore], ([row]) => Number(row?.id)),
    /** Records how a run ended: status, counters, checkpoint and error. */
    finishRun: (id: number, r: RunFinish): Ask<void> => {
      const counts = [r.pages, r.requests, r.retries, r.inserted, r.updated, r.unchanged, r.rejected];
      const rest = [r.checkpointAfter, r.error, r.gapsFound ?? 0, r.repaired ?? 0, id];
      return asking(finish, [r.status, r.finishedAt, ...counts, ...rest], none);
    },
    /** Records a drift check's totals on a run: the source's count and the mirror's matching count. */
    recordDrift: (runId: number, sourceTotal: number, localTotal: number) =>
      asking(drift, [sourceTotal, localTotal, runId], none),
    /**
     * Marks every run still `running` as `interrupted` and answers their ids. Only the writer lease's
     * holder may ask it: any other run left `running` belongs to a process that died or lost the lease.
     */
    markInterruptedRuns: (at: string) =>
      asking(interrupt, [at, INTERRUPTED], (rows) => rows.map((r) => Number(r.id)).sort((a, b) => a - b)),
    /** The newest run, of the given kind when one is given. */
    lastRun: (kind?: RunKind) =>
      asking(kind ? ofKind : ofAny, kind ? [kind, 1] : [1], ([row]) => row as RunRow | undefined),
    /** The newest `n` runs, newest first. */
    recentRuns: (n: number) => asking(ofAny, [n], (rows) => rows as RunRow[]),
  };
}
