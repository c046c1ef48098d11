/**
 * A small bounded pool: at most `concurrency` tasks in flight, fed from an iterator so a huge job
 * never materialises its task list.
 */

/**
 * Runs `work` for each item with at most `concurrency` (≥ 1) running at once. After the first
 * failure (or once `signal` aborts) no new item starts; the ones in flight are awaited, then the
 * first error is rethrown (an abort as an AbortError).
 */
export async function runPool<T>(
  items: Iterator<T>,
  concurrency: number,
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
  await Promise.all(Array.from({ length: Math.max(1, Math.floor(concurrency)) }, worker));
  if (failure) throw failure.err;
  if (signal?.aborted) {
    const err = new Error("stopped before the work was done", { cause: signal.reason });
    err.name = "AbortError";
    throw err;
  }
}
