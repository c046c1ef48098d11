/**
 * The thread behind `workerSnapshot` (status-worker.ts): its own read-only connection to the mirror,
 * answering one message at a time, so the status page's scans never run on the daemon's event loop.
 */
import { parentPort, workerData } from "node:worker_threads";
import Database from "better-sqlite3";
import { BUSY_TIMEOUT_MS, CACHE_KIB } from "./pragmas.js";
import { sqliteAll } from "./snapshot.js";

/** What the daemon asks: open a read transaction, run a statement in it, or end it. */
export type ThreadRequest =
  | { id: number; op: "begin" | "end" }
  | { id: number; op: "all"; sql: string; params: readonly unknown[] };

/** The answer to the request with the same `id`: its rows, or why it failed. */
export type ThreadReply =
  | { id: number; rows: unknown[] }
  | { id: number; error: { message: string; code?: string | undefined } };

const port = parentPort;
if (port) {
  const { path } = workerData as { path: string };
  let db: Database.Database | undefined;
  port.on("message", (req: ThreadRequest) => {
    try {
      // Opened at the first request, so a failure to open is that request's answer, not a crash.
      db ??= open(path);
      port.postMessage({ id: req.id, rows: answer(db, req) } satisfies ThreadReply);
    } catch (err) {
      const { message, code } = err as { message?: string; code?: string };
      port.postMessage({
        id: req.id,
        error: { message: message ?? String(err), code },
      } satisfies ThreadReply);
    }
  });
}

function open(path: string): Database.Database {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
  db.pragma(`cache_size = -${CACHE_KIB}`);
  return db;
}

function answer(db: Database.Database, req: ThreadRequest): unknown[] {
  if (req.op === "all") return sqliteAll(db, req.sql, req.params);
  // Deferred: the snapshot is taken at the first read and holds until COMMIT.
  if (db.inTransaction) db.exec("COMMIT");
  if (req.op === "begin") db.exec("BEGIN");
  return [];
}
