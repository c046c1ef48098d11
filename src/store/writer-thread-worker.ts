/**
 * The writer thread's body (see writer-thread.ts): its own connection and the same statements
 * as the in-process store.
 *
 * Feed rows are written as they arrive, inside a transaction opened by the first of them and
 * committed, with the progress of the last, when the main thread asks or when it has sent nothing
 * for a while: the write lock is never held waiting on a main thread that may itself be waiting
 * for a lock. A failure rolls the open transaction back and refuses every later message, so
 * progress is never stored past rows that were not.
 *
 * Detail batches commit in the order sent, each with its progress, and each is answered; after a
 * failed one the later ones are refused for the same reason.
 */
import { receiveMessageOnPort, workerData } from "node:worker_threads";
import Database from "better-sqlite3";
import type { UpsertCounts } from "../sync/ports.js";
import { type DetailRows, detailStatements } from "./detail-writes.js";
import { type FeedRows, type FeedStatements, feedStatements, noCounts } from "./feed-writes.js";
import { applyPragmas } from "./pragmas.js";
import { stateWriter } from "./state.js";
import type {
  DetailMessage,
  DetailReply,
  WriterData,
  WriterError,
  WriterMessage,
  WriterReply,
} from "./writer-thread.js";

/** How long an open transaction waits for more rows before it commits what it has, ms. */
const IDLE_COMMIT_MS = 100;
/** Detail batches committed together at most (about 100 bookings each). */
const MAX_GROUP = 8;

const { path, done, port, detailPort } = workerData as WriterData;
const handled = new Int32Array(done);

let db: Database.Database | undefined;
let statements: FeedStatements | undefined;
/** Stores detail batches, in order, in one transaction; returns each one's counts. */
let writeDetails: ((parts: DetailRows[]) => UpsertCounts[]) | undefined;
/** The first failure; once set, nothing more is written. */
let failure: WriterReply | undefined;
/** The first failed detail batch's error; once set, later detail batches are refused with it. */
let detailFailure: WriterError | undefined;
try {
  db = new Database(path, { fileMustExist: true });
  applyPragmas(db, false);
  const state = stateWriter(db);
  statements = feedStatements(db, state);
  const details = detailStatements(db, state);
  const group = db.transaction((parts: DetailRows[]) => parts.map((part) => details.write(part)));
  writeDetails = (parts) => group.immediate(parts);
} catch (err) {
  failure = { error: describe(err, `open database ${path}`) };
  detailFailure = failure.error;
  port.postMessage(failure);
}

/** The open transaction: what it has stored so far and the last part written in it. */
let open: { counts: UpsertCounts; last: FeedRows } | undefined;
let idle: NodeJS.Timeout | undefined;

port.on("message", (message: WriterMessage) => {
  if ("close" in message) {
    guard(commit);
    db?.close();
    port.close();
    detailPort.close();
    Atomics.store(handled, 1, 1);
    Atomics.notify(handled, 1);
    return;
  }
  guard(() => write(message.rows, message.commit));
  Atomics.add(handled, 0, 1);
  Atomics.notify(handled, 0);
});

detailPort.on("message", (first: DetailMessage) => {
  // Batches that queued up while the last commit ran share one transaction: a commit (writing the
  // pages it dirtied to the WAL) costs about as much as storing a page, so committing them one by
  // one would make the writer the backfill's bottleneck. Each is still answered on its own.
  const group = [first];
  while (group.length < MAX_GROUP) {
    const next = receiveMessageOnPort(detailPort);
    if (!next) break;
    group.push(next.message as DetailMessage);
  }
  let replies: DetailReply[];
  if (detailFailure) replies = group.map(({ seq }) => ({ seq, error: detailFailure as WriterError }));
  else {
    try {
      // A feed transaction left open by an idle main thread commits first, on its own.
      guard(commit);
      const counts = (writeDetails as NonNullable<typeof writeDetails>)(group.map((m) => m.rows));
      replies = group.map(({ seq }, i) => ({ seq, counts: counts[i] as UpsertCounts }));
    } catch (err) {
      detailFailure = describe(err, "store detail rows");
      replies = group.map(({ seq }) => ({ seq, error: detailFailure as WriterError }));
    }
  }
  for (const reply of replies) detailPort.postMessage(reply);
});

function write(part: FeedRows | null, andCommit: boolean): void {
  if (!db || !statements) return;
  clearTimeout(idle);
  if (part) {
    if (!open) {
      db.exec("BEGIN IMMEDIATE");
      open = { counts: noCounts(), last: part };
    }
    statements.write(part, open.counts);
    open.last = part;
  }
  if (andCommit) commit();
  else idle = setTimeout(() => guard(commit), IDLE_COMMIT_MS);
}

function commit(): void {
  clearTimeout(idle);
  if (!open || !db || !statements) return;
  statements.progress(open.last);
  db.exec("COMMIT");
  port.postMessage({ counts: open.counts } satisfies WriterReply);
  open = undefined;
}

/** Runs `step` unless a failure came first; a throw rolls back and becomes the failure. */
function guard(step: () => void): void {
  if (failure) return;
  try {
    step();
  } catch (err) {
    open = undefined;
    failure = { error: describe(err, "store feed rows") };
    try {
      if (db?.inTransaction) db.exec("ROLLBACK");
    } catch {
      // The connection is unusable; the failure above already says why.
    }
    port.postMessage(failure);
  }
}

function describe(err: unknown, context: string): { message: string; code?: string } {
  const e = err instanceof Error ? err : new Error(String(err));
  const code = (e as { code?: unknown }).code;
  return { message: `${context}: ${e.message}`, ...(typeof code === "string" ? { code } : {}) };
}
