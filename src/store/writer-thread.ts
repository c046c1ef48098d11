/**
 * The writer thread (the `FeedPipe` and `DetailPipe` ports): a second connection, in a worker,
 * stores batches while the main thread fetches and parses the next pages. Writing a page of full
 * records (and the checkpoints and disk syncs that follow) costs about as much CPU as fetching and
 * validating it, so on one thread a sync stalls its fetching and a backfill's pages queue behind
 * one another's writes; on two, both halves run at once.
 *
 * Feed batches:
 * The main thread turns each page's records into plain row values (`toFeedRows`) and posts them;
 * the worker writes them as they arrive and commits them with the walk's progress when a batch is
 * sent with `commit` (see writer-thread-worker.ts), so rows and progress still commit together
 * (invariant 3). The walk is synchronous about its store, so waiting is too: the worker counts the
 * messages it has handled in shared memory, and the main thread blocks on that (`Atomics.wait`)
 * only when it is too far ahead or must know everything is stored.
 *
 * Detail batches (the backfill's pages) go over a second channel and commit in the order sent,
 * each with its progress (those that queue up while a commit runs share the next one), and are
 * answered one by one: the backfill learns of each page's commit without blocking the event loop
 * its other requests run on. After a failed batch the worker refuses the
 * ones already sent behind it, since their progress may count the failed page as read; batches
 * sent once the failure is known (a new pass) are stored again. A writer that answers nothing for
 * `stallMs` while batches wait fails the pass the same way, so a backfill never waits for good.
 */
import { dirname, extname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { MessageChannel, type MessagePort, receiveMessageOnPort, Worker } from "node:worker_threads";
import { startThread } from "../heap.js";
import type { DetailBatch, DetailPipe } from "../sync/detail-ports.js";
import type { FeedBatch, FeedPipe, UpsertCounts } from "../sync/ports.js";
import { type DetailRows, toDetailRows } from "./detail-writes.js";
import { type FeedRows, noCounts, toFeedRows } from "./feed-writes.js";
import type { PersonalData } from "./personal-data.js";

/** What the worker is started with. */
export interface WriterData {
  path: string;
  /**
   * Int32 slots: 0 counts the messages handled (stored or refused), 1 is set once the worker
   * closed, 2 once its thread runs.
   */
  done: SharedArrayBuffer;
  port: MessagePort;
  /** The detail batches' channel. */
  detailPort: MessagePort;
}

/**
 * Main to worker: rows to store (none when only committing), committed with everything before
 * them when `commit` is set; or `close`. `epoch` numbers the walk that sent it (see `begin`):
 * after a failure the worker refuses the rest of that walk's messages and takes the next walk's.
 */
export type WriterMessage = { rows: FeedRows | null; commit: boolean; epoch: number } | { close: true };
/**
 * Worker to main: the counts of each commit, or a failure of the walk `epoch` (or `fatal`: the
 * database could not be opened, so nothing can be stored).
 */
export type WriterReply =
  | { counts: UpsertCounts }
  | { error: WriterError; epoch: number }
  | { error: WriterError; fatal: true };
/** A failure as it crosses threads. */
export interface WriterError {
  message: string;
  code?: string;
}
/** Main to worker on the detail channel: one batch; `epoch` as in `WriterMessage`. */
export interface DetailMessage {
  seq: number;
  epoch: number;
  rows: DetailRows;
}
/** Worker to main on the detail channel: that batch's counts, or why it was not stored. */
export type DetailReply =
  | { seq: number; counts: UpsertCounts }
  | { seq: number; epoch: number; error: WriterError };

export interface WriterThreadOptions {
  /** Batches sent but not yet handled before `send` blocks; default 20 (about 2 MB of rows). */
  maxPending?: number | undefined;
  /**
   * Longest the writer may go without handling a batch while one is awaited before the wait fails,
   * ms; default 120_000. For detail batches, every batch then waiting is rejected with that reason.
   */
  stallMs?: number | undefined;
  /**
   * Personal fields replaced as each batch becomes rows, on the calling thread; default none
   * (`SYNC_PERSONAL_DATA=keep`, records stored as received).
   */
  personalData?: PersonalData | undefined;
}

/**
 * A running writer thread; `close` stops it once the feed batches already sent are stored (detail
 * batches are awaited by their callers before the store closes).
 */
export interface WriterThread extends FeedPipe, DetailPipe {
  close(): void;
}

// The worker holds a few batches of rows at most (they go straight to SQLite), so a small heap is enough; capping it
// keeps the thread's share of the process's memory small.
const WORKER_LIMITS = { maxYoungGenerationSizeMb: 8, maxOldGenerationSizeMb: 64 };
const WAIT_SLICE_MS = 1000;
const CLOSE_WAIT_MS = 5000;
const START_WAIT_MS = 5000;

/** The main thread's side of the channel, and what it knows of the worker's progress. */
interface Link {
  port: MessagePort;
  /** Slot 0: messages the worker has handled; slot 1: set once it has closed. */
  handled: Int32Array;
  /** Messages sent. */
  sent: number;
  /** Whether the last batch sent left rows waiting for a commit. */
  uncommitted: boolean;
  closed: boolean;
  /** The current walk's first failure, or the thread's end (kept for good). */
  failure: Error | undefined;
  /** Set once the thread cannot store anything again: it died, or could not open the file. */
  dead: boolean;
  /** The current walk's number, carried by its messages. */
  epoch: number;
  stallMs: number;
}

/** Starts a writer thread on the database at `path`, which must exist and be migrated. */
export function startWriterThread(path: string, options: WriterThreadOptions = {}): WriterThread {
  const maxPending = options.maxPending ?? 20;
  const done = new SharedArrayBuffer(12);
  const { port1, port2 } = new MessageChannel();
  const details = new MessageChannel();
  // Under the memory profile, waits for the thread to run (about 75 ms on 2 cores; heap.ts). A
  // thread that has not run by then is reported by its error event if it cannot start; if it is
  // only slow, the profile's limit comes back at the next collection.
  const worker = startThread(
    () => spawnWriter({ path, done, port: port2, detailPort: details.port2 }),
    () => Atomics.wait(new Int32Array(done), 2, 0, START_WAIT_MS),
  );
  const link: Link = {
    port: port1,
    handled: new Int32Array(done),
    sent: 0,
    uncommitted: false,
    closed: false,
    failure: undefined,
    dead: false,
    epoch: 0,
    stallMs: options.stallMs ?? 120_000,
  };
  // Neither keeps the process alive: every wait is synchronous, and `close` ends the thread.
  worker.unref();
  port1.unref();
  const detailLink = detailChannel(details.port1, link.stallMs);
  // Seen between waits: a worker that cannot start (or dies) handles nothing, so say why.
  worker.on("error", (err) => {
    link.failure ??= new Error(`writer thread: ${err.message}`, { cause: err });
    link.dead = true;
    detailLink.fail(link.failure);
  });
  worker.on("exit", (code) => {
    if (!link.closed) link.failure ??= new Error(`writer thread: exited with code ${code}`);
    link.dead = true;
    detailLink.fail(link.failure ?? new Error("writer thread: closed"));
  });
  return {
    send(batch: FeedBatch, commit: boolean) {
      if (link.closed) throw new Error("writer thread: closed");
      post(link, { rows: toFeedRows(batch, options.personalData), commit, epoch: link.epoch });
      link.uncommitted = !commit;
      waitUntil(link, maxPending);
    },
    settle(wait: boolean) {
      if (wait && link.uncommitted && !link.closed)
        post(link, { rows: null, commit: true, epoch: link.epoch });
      if (wait) waitUntil(link, 0);
      const counts = collect(link);
      if (link.failure) throw link.failure;
      return counts;
    },
    begin() {
      collect(link);
      if (link.dead) return;
      link.failure = undefined;
      link.epoch++;
    },
    storeDetails(batch: DetailBatch) {
      if (link.closed) return Promise.reject(new Error("writer thread: closed"));
      return detailLink.send(toDetailRows(batch, options.personalData));
    },
    beginDetails() {
      detailLink.begin();
    },
    close() {
      if (link.closed) return;
      link.closed = true;
      port1.postMessage({ close: true } satisfies WriterMessage);
      // Its connection closes before the caller's, so the last one to close can checkpoint the
      // WAL; the thread then ends on its own.
      Atomics.wait(link.handled, 1, 0, CLOSE_WAIT_MS);
      port1.close();
      detailLink.fail(new Error("writer thread: closed"));
      details.port1.close();
    },
  };
}

function post(link: Link, message: WriterMessage): void {
  link.port.postMessage(message);
  link.sent++;
  link.uncommitted = false;
}

/** Blocks until at most `pending` messages are unhandled; fails when the worker stalls or failed. */
function waitUntil(link: Link, pending: number): void {
  let last = Atomics.load(link.handled, 0);
  let since = performance.now();
  while (link.sent - last > pending) {
    if (link.failure) throw link.failure;
    Atomics.wait(link.handled, 0, last, WAIT_SLICE_MS);
    const now = Atomics.load(link.handled, 0);
    if (now !== last) [last, since] = [now, performance.now()];
    else if (performance.now() - since > link.stallMs)
      throw new Error(`writer thread: nothing stored in ${link.stallMs} ms`);
  }
}

/** The counts of the commits reported since the last call; keeps the first failure. */
function collect(link: Link): UpsertCounts {
  const counts = noCounts();
  for (let m = receiveMessageOnPort(link.port); m; m = receiveMessageOnPort(link.port)) {
    const reply = m.message as WriterReply;
    if ("error" in reply) {
      // The database could not be opened: nothing will ever be stored.
      if ("fatal" in reply) link.dead = true;
      // An earlier walk's failure arriving late: that walk is over, and its batches were refused.
      else if (reply.epoch !== link.epoch) continue;
      link.failure ??= Object.assign(new Error(`writer thread: ${reply.error.message}`), {
        code: reply.error.code,
      });
      continue;
    }
    for (const k of ["inserted", "updated", "unchanged", "rejected"] as const) counts[k] += reply.counts[k];
  }
  return counts;
}

/**
 * The main thread's side of the detail channel: each batch's promise, settled by the worker's
 * answer. The port keeps the process alive only while answers are awaited.
 */
function detailChannel(port: MessagePort, stallMs: number) {
  const waiting = new Map<number, { resolve(counts: UpsertCounts): void; reject(err: Error): void }>();
  let seq = 0;
  /** When the worker last answered, or the first batch of a wait was sent. */
  let heardAt = performance.now();
  /**
   * Checks, while answers are awaited, that the worker still answers: a worker stuck in SQLite
   * (a lock another program holds, a disk that stopped) would otherwise leave the backfill waiting
   * for good, deaf even to its abort, which waits for outstanding commits.
   */
  let watching = false;
  const watch = (ms: number) => {
    watching = true;
    setTimeout(check, ms).unref();
  };
  const check = () => {
    watching = false;
    // Answers already queued count: this timer may run before them after a long synchronous stretch
    // of the main thread.
    for (let m = receiveMessageOnPort(port); m; m = receiveMessageOnPort(port))
      onReply(m.message as DetailReply);
    if (waiting.size === 0) return;
    const silent = performance.now() - heardAt;
    if (silent < stallMs) {
      watch(stallMs - silent);
      return;
    }
    const err = new Error(`writer thread: nothing stored in ${stallMs} ms`);
    // This pass gives up; the batches it leaves behind commit, or not, each with its own progress.
    failed ??= err;
    for (const entry of waiting.values()) entry.reject(err);
    waiting.clear();
    port.unref();
  };
  /** The current pass's number, carried by its batches. */
  let epoch = 0;
  /** The current pass's first failure: its later batches are refused without being sent. */
  let failed: Error | undefined;
  /** Why nothing can be stored any more: the thread ended. */
  let dead: Error | undefined;
  const onReply = (reply: DetailReply) => {
    heardAt = performance.now();
    const entry = waiting.get(reply.seq);
    waiting.delete(reply.seq);
    if (waiting.size === 0) port.unref();
    if ("error" in reply) {
      const err = Object.assign(new Error(`writer thread: ${reply.error.message}`), {
        code: reply.error.code,
      });
      if (reply.epoch === epoch) failed ??= err;
      entry?.reject(err);
    } else entry?.resolve(reply.counts);
  };
  port.on("message", onReply);
  // Attaching the listener refs the port; it holds the process only while answers are awaited.
  port.unref();
  return {
    send(rows: DetailRows): Promise<UpsertCounts> {
      const refusal = dead ?? failed;
      if (refusal) return Promise.reject(refusal);
      const message: DetailMessage = { seq: ++seq, epoch, rows };
      // Posted first: a batch that cannot be posted leaves nothing waiting behind.
      port.postMessage(message);
      port.ref();
      if (waiting.size === 0) heardAt = performance.now();
      if (!watching) watch(stallMs);
      return new Promise<UpsertCounts>((resolve, reject) => waiting.set(message.seq, { resolve, reject }));
    },
    /** Starts a pass: an earlier pass's failure is behind it. */
    begin() {
      epoch++;
      failed = undefined;
    },
    /** Rejects every batch still waiting, and every later one, with `err`. */
    fail(err: Error) {
      dead ??= err;
      for (const entry of waiting.values()) entry.reject(err);
      waiting.clear();
      port.unref();
    },
  };
}

/**
 * Starts the worker: a first statement that marks the thread as running (see `startWriterThread`),
 * then the worker's module, compiled (`.js`), or from TypeScript source (the tests) through a
 * loader for `.ts`, which tsx, already in the dev toolchain, is.
 */
function spawnWriter(data: WriterData): Worker {
  const here = fileURLToPath(import.meta.url);
  const entry = pathToFileURL(join(dirname(here), `writer-thread-worker${extname(here)}`));
  const load =
    extname(here) === ".js"
      ? `import(${JSON.stringify(entry.href)})`
      : `import("tsx/esm/api").then((tsx) => tsx.register()).then(() => import(${JSON.stringify(entry.href)}))`;
  // No `require`: the snippet runs as a module when the process was started with
  // `--input-type=module`, which a thread inherits.
  const boot = `
    import("node:worker_threads").then(({ workerData }) => {
      const slots = new Int32Array(workerData.done);
      Atomics.store(slots, 2, 1);
      Atomics.notify(slots, 2);
      return ${load};
    });`;
  return new Worker(boot, {
    eval: true,
    workerData: data,
    transferList: [data.port, data.detailPort],
    resourceLimits: WORKER_LIMITS,
  });
}
