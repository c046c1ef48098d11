/**
 * The writer thread's body (see writer-thread.ts): its own connection and the same statements
 * as the in-process store.
 *
 * Feed rows are written as they arrive, inside a transaction opened by the first of them and
 * committed, with the progress of the last, when the main thread asks or when it has sent nothing
 * for a while: the write lock is never held waiting on a main thread that may itself be waiting
 * for a lock. A failure rolls the open transaction back and refuses the later messages of its
 * epoch (those the failed walk sent before it heard), so progress is never stored past rows that
 * were not; the next walk's messages carry the next epoch and are stored again.
 *
 * Detail batches commit in the order sent, each with its progress, and each is answered; after a
 * failed one the rest of its epoch is refused for the same reason.
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
/** Why the database could not be opened; once set, nothing is ever written. */
let broken: WriterError | undefined;
/** Feed messages of this epoch or older are refused: one of them failed. */
let feedFailedEpoch = -1;
/** The last failed detail batch: batches of its epoch or older are refused with its error. */
let detailFailure: { epoch: number; error: WriterError } | undefined;
try {
  db = new Database(path, { fileMustExist: true });
  applyPragmas(db, false);
  const state = stateWriter(db);
  statements = feedStatements(db, state);
  const details = detailStatements(db, state);
  const group = db.transaction((parts: DetailRows[]) => parts.map((part) => details.write(part)));
  writeDetails = (parts) => group.immediate(parts);
} catch (err) {
  broken = describe(err, `open database ${path}`);
  port.postMessage({ error: broken, fatal: true } satisfies WriterReply);
}

/** The open transaction: what it has stored so far, the last part written in it, and its epoch. */
let open: { counts: UpsertCounts; last: FeedRows; epoch: number } | undefined;
let idle: NodeJS.Timeout | undefined;

port.on("message", (message: WriterMessage) => {
  if ("close" in message) {
    guardOpen();
    db?.close();
    port.close();
    detailPort.close();
    Atomics.store(handled, 1, 1);
    Atomics.notify(handled, 1);
    return;
  }
  if (message.epoch > feedFailedEpoch)
    guard(message.epoch, () => write(message.rows, message.commit, message.epoch));
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
  const refusal = (m: DetailMessage): WriterError | undefined =>
    broken ?? (detailFailure && m.epoch <= detailFailure.epoch ? detailFailure.error : undefined);
  const replies: DetailReply[] = [];
  const accepted: DetailMessage[] = [];
  for (const m of group) {
    const error = refusal(m);
    if (error) replies.push({ seq: m.seq, epoch: m.epoch, error });
    else accepted.push(m);
  }
  if (accepted.length > 0) {
    try {
      // A feed transaction left open by an idle main thread commits first, on its own.
      guardOpen();
      const counts = (writeDetails as NonNullable<typeof writeDetails>)(accepted.map((m) => m.rows));
      accepted.forEach(({ seq }, i) => {
        replies.push({ seq, counts: counts[i] as UpsertCounts });
      });
    } catch (err) {
      const epoch = Math.max(...accepted.map((m) => m.epoch));
      detailFailure = { epoch, error: describe(err, "store detail rows") };
      for (const { seq } of accepted) replies.push({ seq, epoch, error: detailFailure.error });
    }
  }
  for (const reply of replies) detailPort.postMessage(reply);
});

function write(part: FeedRows | null, andCommit: boolean, epoch: number): void {
  if (!db || !statements) return;
  clearTimeout(idle);
  if (part) {
    if (!open) {
      db.exec("BEGIN IMMEDIATE");
      open = { counts: noCounts(), last: part, epoch };
    }
    statements.write(part, open.counts);
    open.last = part;
  }
  if (andCommit) commit();
  else idle = setTimeout(guardOpen, IDLE_COMMIT_MS);
}

function commit(): void {
  clearTimeout(idle);
  if (!open || !db || !statements) return;
  statements.progress(open.last);
  db.exec("COMMIT");
  port.postMessage({ counts: open.counts } satisfies WriterReply);
  open = undefined;
}

/** Commits the open feed transaction, if any, as its own epoch's step. */
function guardOpen(): void {
  if (open) guard(open.epoch, commit);
}

/**
 * Runs a step of a feed message of `epoch` (nothing when the database could not be opened); a throw
 * rolls back, refuses the rest of that epoch and is reported.
 */
function guard(epoch: number, step: () => void): void {
  if (broken) return;
  try {
    step();
  } catch (err) {
    open = undefined;
    feedFailedEpoch = Math.max(feedFailedEpoch, epoch);
    try {
      if (db?.inTransaction) db.exec("ROLLBACK");
    } catch {
      // The connection is unusable; the failure below already says why.
    }
    port.postMessage({ error: describe(err, "store feed rows"), epoch } satisfies WriterReply);
  }
}

function describe(err: unknown, context: string): { message: string; code?: string } {
  const e = err instanceof Error ? err : new Error(String(err));
  const code = (e as { code?: unknown }).code;
  return { message: `${context}: ${e.message}`, ...(typeof code === "string" ? { code } : {}) };
}
