/**
 * One read shared by every status page view: a scan of a large mirror takes seconds, so views that
 * arrive together wait on the one read in flight, a fresh result is reused for a few seconds, and a
 * view waits at most a bound while the read goes on for the views after it.
 */
import type { Clock } from "../sync/ports.js";

export interface SharedReadOptions {
  /** Decides whether a result is fresh enough to reuse. */
  clock: Clock;
  /** A result is reused for this long after it arrived, ms; 0 reads again at every view. */
  reuseMs: number;
  /** A view waits at most this long for the read in flight, ms; the read itself goes on. */
  timeoutMs: number;
}

/** A view gave up waiting on a read that is still running; the next view may get its result. */
export class ReadTimeoutError extends Error {
  constructor(readonly timeoutMs: number) {
    super(`the read took over ${timeoutMs} ms; it goes on, for the next view`);
    this.name = "ReadTimeoutError";
  }
}

/**
 * Wraps `read` so at most one call runs at a time: callers meanwhile share it, callers within
 * `reuseMs` of its end get its result, and each caller's wait ends after `timeoutMs` with a
 * `ReadTimeoutError`. A failed read is not kept: the next caller starts another, as it does once the
 * read in flight has run for three times `timeoutMs`.
 */
export function sharedRead<T>(read: () => Promise<T>, options: SharedReadOptions): () => Promise<T> {
  let fresh: { value: T; at: number } | undefined;
  let inFlight: Promise<T> | undefined;
  let startedAt = 0;
  const start = (): Promise<T> => {
    startedAt = options.clock.now().getTime();
    const run = Promise.resolve()
      .then(read)
      .then((value) => {
        fresh = { value, at: options.clock.now().getTime() };
        return value;
      });
    inFlight = run;
    // Whoever waited gets the failure; a read nobody waits for any more must not be unhandled.
    const forget = () => {
      if (inFlight === run) inFlight = undefined;
    };
    void run.then(forget, forget);
    return run;
  };
  return () => {
    if (fresh && options.clock.now().getTime() - fresh.at < options.reuseMs)
      return Promise.resolve(fresh.value);
    // A read that outlived three waits is given up on (a connection that died mid-query): the next
    // view starts another rather than every view waiting on it forever.
    const stale = inFlight !== undefined && options.clock.now().getTime() - startedAt > 3 * options.timeoutMs;
    return withTimeout(inFlight === undefined || stale ? start() : inFlight, options.timeoutMs);
  };
}

function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    // The read keeps the process alive while it needs to; the wait alone never does.
    timer = setTimeout(() => reject(new ReadTimeoutError(ms)), ms).unref();
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}
