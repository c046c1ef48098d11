/**
 * The feed writer thread (the `FeedPipe` port): a second connection, in a worker, stores feed
 * batches while the main thread fetches and parses the next pages. A sync is otherwise serial:
 * writing a batch (and the checkpoints and disk syncs that follow) would stall the fetching.
 *
 * The main thread turns each page's records into plain row values (`toFeedRows`) and posts them;
 * the worker writes them as they arrive and commits them with the walk's progress when a batch is
 * sent with `commit` (see feed-thread-worker.ts), so rows and progress still commit together
 * (invariant 3). The walk is synchronous about its store, so waiting is too: the worker counts the
 * messages it has handled in shared memory, and the main thread blocks on that (`Atomics.wait`)
 * only when it is too far ahead or must know everything is stored.
 */
import { dirname, extname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { MessageChannel, type MessagePort, receiveMessageOnPort, Worker } from "node:worker_threads";
import type { FeedBatch, FeedPipe, UpsertCounts } from "../sync/ports.js";
import { type FeedRows, noCounts, toFeedRows } from "./feed-writes.js";

/** What the worker is started with. */
export interface WriterData {
  path: string;
  /** Int32 slots: 0 counts the messages handled (stored or refused), 1 is set once the worker closed. */
  done: SharedArrayBuffer;
  port: MessagePort;
}

/**
 * Main to worker: rows to store (none when only committing), committed with everything before
 * them when `commit` is set; or `close`.
 */
export type WriterMessage = { rows: FeedRows | null; commit: boolean } | { close: true };
/** Worker to main: the counts of each commit, or the first failure. */
export type WriterReply = { counts: UpsertCounts } | { error: { message: string; code?: string } };

export interface FeedThreadOptions {
  /** Batches sent but not yet handled before `send` blocks; default 20 (about 2 MB of rows). */
  maxPending?: number | undefined;
  /** Longest the writer may go without handling a batch before a wait fails, ms; default 120_000. */
  stallMs?: number | undefined;
}

/** A running writer thread; `close` stops it once the batches already sent are stored. */
export interface FeedThread extends FeedPipe {
  close(): void;
}

// The worker holds no rows (they go straight to SQLite), so a small heap is enough; capping it
// keeps the thread's share of the process's memory small.
const WORKER_LIMITS = { maxYoungGenerationSizeMb: 8, maxOldGenerationSizeMb: 64 };
const WAIT_SLICE_MS = 1000;
const CLOSE_WAIT_MS = 5000;

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
  failure: Error | undefined;
  stallMs: number;
}

/** Starts a writer thread on the database at `path`, which must exist and be migrated. */
export function startFeedThread(path: string, options: FeedThreadOptions = {}): FeedThread {
  const maxPending = options.maxPending ?? 20;
  const done = new SharedArrayBuffer(8);
  const { port1, port2 } = new MessageChannel();
  const worker = spawnWriter({ path, done, port: port2 });
  const link: Link = {
    port: port1,
    handled: new Int32Array(done),
    sent: 0,
    uncommitted: false,
    closed: false,
    failure: undefined,
    stallMs: options.stallMs ?? 120_000,
  };
  // Neither keeps the process alive: every wait is synchronous, and `close` ends the thread.
  worker.unref();
  port1.unref();
  // Seen between waits: a worker that cannot start (or dies) handles nothing, so say why.
  worker.on("error", (err) => {
    link.failure ??= new Error(`feed writer thread: ${err.message}`, { cause: err });
  });
  worker.on("exit", (code) => {
    if (!link.closed) link.failure ??= new Error(`feed writer thread: exited with code ${code}`);
  });
  return {
    send(batch: FeedBatch, commit: boolean) {
      if (link.closed) throw new Error("feed writer thread: closed");
      post(link, { rows: toFeedRows(batch), commit });
      link.uncommitted = !commit;
      waitUntil(link, maxPending);
    },
    settle(wait: boolean) {
      if (wait && link.uncommitted && !link.closed) post(link, { rows: null, commit: true });
      if (wait) waitUntil(link, 0);
      const counts = collect(link);
      if (link.failure) throw link.failure;
      return counts;
    },
    close() {
      if (link.closed) return;
      link.closed = true;
      port1.postMessage({ close: true } satisfies WriterMessage);
      // Its connection closes before the caller's, so the last one to close can checkpoint the
      // WAL; the thread then ends on its own.
      Atomics.wait(link.handled, 1, 0, CLOSE_WAIT_MS);
      port1.close();
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
      throw new Error(`feed writer thread: nothing stored in ${link.stallMs} ms`);
  }
}

/** The counts of the commits reported since the last call; keeps the first failure. */
function collect(link: Link): UpsertCounts {
  const counts = noCounts();
  for (let m = receiveMessageOnPort(link.port); m; m = receiveMessageOnPort(link.port)) {
    const reply = m.message as WriterReply;
    if ("error" in reply) {
      link.failure ??= Object.assign(new Error(`feed writer thread: ${reply.error.message}`), {
        code: reply.error.code,
      });
      continue;
    }
    for (const k of ["inserted", "updated", "unchanged", "rejected"] as const) counts[k] += reply.counts[k];
  }
  return counts;
}

/**
 * Starts the worker from the compiled `.js`; from TypeScript source (the tests) the worker needs a
 * loader for `.ts`, and tsx, which the dev toolchain already brings, is one.
 */
function spawnWriter(data: WriterData): Worker {
  const here = fileURLToPath(import.meta.url);
  const entry = pathToFileURL(join(dirname(here), `feed-thread-worker${extname(here)}`));
  const options = { workerData: data, transferList: [data.port], resourceLimits: WORKER_LIMITS };
  if (extname(here) === ".js") return new Worker(entry, options);
  const boot = `import("tsx/esm/api").then((tsx) => tsx.register()).then(() => import(${JSON.stringify(entry.href)}));`;
  return new Worker(boot, { ...options, eval: true });
}
