/**
 * Snapshots of a SQLite mirror read in a worker thread (status-worker-thread.ts), for the daemon's
 * status page. better-sqlite3 is synchronous: counting a large mirror on the event loop held /healthz
 * and /metrics for as long as the page took (docs/performance.md). Here the loop only passes messages.
 * The thread starts at the first read, so a daemon nobody views carries none of it, and ends at `close`
 * or once idle: kept after one page view, it held memory an idle sidecar pays for all day
 * (docs/performance.md).
 */
import { extname } from "node:path";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { systemClock } from "../clock.js";
import { wrapError } from "../errors.js";
import type { TimerClock } from "../sync/ports.js";
import { type MirrorReader, type Snapshot, serialSnapshot, sqliteDatabase } from "./snapshot.js";
import type { ThreadReply, ThreadRequest } from "./status-worker-thread.js";

type Request = ThreadRequest extends infer R ? (R extends { id: number } ? Omit<R, "id"> : never) : never;

type Thread = ReturnType<typeof startThread>;

/** How long the thread outlives its last read, ms: page views in a row share one, a lone one ends. */
export const THREAD_IDLE_MS = 60_000;

/**
 * Snapshots of the file at `path`, one after another (the thread's connection holds one transaction
 * at a time, and two page views may overlap), each a read transaction on the thread's own read-only
 * connection: it sees what is committed and never meets the writer's open batch. Its reads run off
 * the event loop; the thread ends `THREAD_IDLE_MS` on `clock` after the last read (the next starts
 * another), and at `close` (idempotent). Tests pass a clock they move instead of waiting it out.
 */
export function workerSnapshot(
  path: string,
  clock: TimerClock = systemClock,
): Snapshot & { close(): Promise<void> } {
  let thread: Thread | undefined;
  let closed = false;
  let cancelIdle = (): void => {};
  const endWhenIdle = (t: Thread): void => {
    // Unref'd (the clock's contract): a thread waiting to end never keeps the process alive.
    cancelIdle = clock.setTimeout(() => {
      if (thread === t) thread = undefined;
      void t.close();
    }, THREAD_IDLE_MS);
  };
  const started = (): Thread => {
    if (closed) throw new Error(`status reads of ${path}: the mirror is closed`);
    // A thread that died is replaced at the next read.
    const own: Thread = startThread(path, () => {
      if (thread === own) thread = undefined;
    });
    thread = own;
    return own;
  };
  const snapshot = serialSnapshot(async () => {
    cancelIdle();
    const t = thread ?? started();
    const reader: MirrorReader = {
      all: async <R>(sql: string, params: readonly unknown[] = []) =>
        (await t.call({ op: "all", sql, params })) as R[],
      database: async () => sqliteDatabase(path),
    };
    await t.call({ op: "begin" }).catch((err: unknown) => {
      endWhenIdle(t);
      throw err;
    });
    return [
      reader,
      () =>
        t.call({ op: "end" }).then(
          () => endWhenIdle(t),
          () => endWhenIdle(t),
        ),
    ];
  });
  const close = async (): Promise<void> => {
    closed = true;
    cancelIdle();
    const t = thread;
    thread = undefined;
    await t?.close();
  };
  return Object.assign(snapshot, { close });
}

function startThread(path: string, onGone: () => void) {
  const worker = spawn(path);
  const pending = new Map<number, { resolve: (rows: unknown[]) => void; reject: (err: Error) => void }>();
  let next = 0;
  let gone = false;
  // Referenced only while a read waits: an idle thread never keeps a process alive.
  worker.unref();
  const fail = (err: Error): void => {
    if (!gone) onGone();
    gone = true;
    for (const p of pending.values()) p.reject(err);
    pending.clear();
  };
  worker.on("message", (reply: ThreadReply) => {
    const p = pending.get(reply.id);
    if (!p) return;
    pending.delete(reply.id);
    if (pending.size === 0) worker.unref();
    if ("rows" in reply) p.resolve(reply.rows);
    else p.reject(Object.assign(new Error(reply.error.message), { code: reply.error.code }));
  });
  worker.on("error", (err) => fail(wrapError(`status reads of ${path}: the worker thread failed`, err)));
  worker.on("exit", (code) => fail(new Error(`status reads of ${path}: the worker thread exited (${code})`)));
  return {
    call: (req: Request) =>
      new Promise<unknown[]>((resolve, reject) => {
        if (gone) return reject(new Error(`status reads of ${path}: the worker thread has ended`));
        const id = ++next;
        pending.set(id, { resolve, reject });
        worker.ref();
        worker.postMessage({ ...req, id } as ThreadRequest);
      }),
    close: async () => {
      fail(new Error(`status reads of ${path}: the mirror is closed`));
      await worker.terminate();
    },
  };
}

/**
 * The thread, from `dist/` as compiled JavaScript; from the sources (vitest, tsx) through tsx, since
 * Node 20 loads no TypeScript in a worker and a worker inherits no `--import` of its parent.
 */
function spawn(path: string): Worker {
  const data = { path };
  const ext = extname(fileURLToPath(import.meta.url));
  const entry = new URL(`./status-worker-thread${ext}`, import.meta.url);
  if (ext !== ".ts") return new Worker(entry, { workerData: data, ...threadFlags() });
  // Resolved from the working directory, a checkout's root: only tests and tsx run the sources.
  const boot = `import("tsx/esm/api").then((t) => { t.register(); return import(${JSON.stringify(entry.href)}); })`;
  // tsx is registered by `boot` itself; none of the parent's flags is needed, and some would be refused.
  return new Worker(boot, { eval: true, workerData: data, execArgv: [] });
}

/**
 * The parent's flags, inherited as Node does by default: passed explicitly, a per-process flag
 * (`--max-old-space-size`, `--title`, `--abort-on-uncaught-exception`) throws
 * ERR_WORKER_INVALID_EXEC_ARGV. Only a parent started with `--input-type` (`node -e`) passes none,
 * since that flag, inherited, makes a file entry fail.
 */
function threadFlags(): { execArgv?: string[] } {
  return process.execArgv.some((flag) => flag.startsWith("--input-type")) ? { execArgv: [] } : {};
}
