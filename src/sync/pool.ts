/** A bounded pool fed from an iterator, so a huge job never materialises its task list. */
import { getMaxListeners, setMaxListeners } from "node:events";

/** Abort listeners one task holds on the shared signal at once (one, with room to spare). */
const LISTENERS_PER_TASK = 2;

/**
 * Runs `work` for each item, at most `concurrency` (≥ 1) at once. After the first failure or an abort
 * no new item starts; those in flight are awaited, then the first error (or an AbortError) is thrown.
 */
export async function runPool<T>(
  items: Iterator<T>,
  concurrency: number,
  work: (item: T) => Promise<void>,
  signal?: AbortSignal,
): Promise<void> {
  const slots = Math.max(1, Math.floor(concurrency));
  let failure: { err: unknown } | undefined;
  const worker = async (): Promise<void> => {
    while (!failure && !signal?.aborted) {
      const next = items.next();
      if (next.done) return;
      try {
        await work(next.value);
      } catch (err) {
        failure ??= { err };
      }
    }
  };
  const lower = signal ? raiseListenerLimit(signal, LISTENERS_PER_TASK * slots) : () => {};
  try {
    await Promise.all(Array.from({ length: slots }, worker));
  } finally {
    lower();
  }
  if (failure) throw failure.err;
  if (signal?.aborted) {
    const err = new Error("stopped before the work was done", { cause: signal.reason });
    err.name = "AbortError";
    throw err;
  }
}

/** Raises `signal`'s listener limit by `by`; returns what takes back only that share. */
function raiseListenerLimit(signal: AbortSignal, by: number): () => void {
  const limit = listenerLimit(signal);
  if (limit === 0) return () => {};
  setMaxListeners(limit + by, signal);
  return () => {
    const now = listenerLimit(signal);
    if (now > by) setMaxListeners(now - by, signal);
  };
}

/** The signal's listener limit; 0 for none. */
function listenerLimit(signal: AbortSignal): number {
  try {
    return getMaxListeners(signal);
  } catch {
    // Node 20 throws for a limit of 0, which it tests as if the signal were no EventTarget.
    return 0;
  }
}

/** Runs the tasks given to it one at a time, in the order given; each call settles as its task does. */
export function inTurn(): <R>(task: () => Promise<R>) => Promise<R> {
  let last: Promise<unknown> = Promise.resolve();
  return (task) => {
    const run = last.then(task);
    last = run.catch(() => {});
    return run;
  };
}
