/**
 * A small bounded pool: at most `concurrency` tasks in flight, fed from an iterator so a huge job
 * never materialises its task list.
 */
import { getMaxListeners, setMaxListeners } from "node:events";

/**
 * Abort listeners one task holds on the shared signal at once: one (its request's, or a wait's
 * between attempts), with room to spare.
 */
const LISTENERS_PER_TASK = 2;

/**
 * Runs `work` for each item with at most `concurrency` (≥ 1) running at once. After the first
 * failure (or once `signal` aborts) no new item starts; the ones in flight are awaited, then the
 * first error is rethrown (an abort as an AbortError). While it runs, `signal` may hold as many
 * listeners as its tasks add, without Node warning of a leak past 10.
 */
export async function runPool<T>(
  items: Iterator<T>,
  concurrency: number,
  work: (item: T) => Promise<void>,
  signal?: AbortSignal,
): Promise<void> {
  const slots = Math.max(1, Math.floor(concurrency));
  // 0 is no limit: nothing to raise, or to put back.
  const limit = signal ? getMaxListeners(signal) : 0;
  if (signal && limit > 0) setMaxListeners(limit + LISTENERS_PER_TASK * slots, signal);
  try {
    await runSlots(items, slots, work, signal);
  } finally {
    if (signal && limit > 0) setMaxListeners(limit, signal);
  }
}

async function runSlots<T>(
  items: Iterator<T>,
  slots: number,
  work: (item: T) => Promise<void>,
  signal?: AbortSignal,
): Promise<void> {
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
  await Promise.all(Array.from({ length: slots }, worker));
  if (failure) throw failure.err;
  if (signal?.aborted) {
    const err = new Error("stopped before the work was done", { cause: signal.reason });
    err.name = "AbortError";
    throw err;
  }
}
