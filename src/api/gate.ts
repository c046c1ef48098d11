/**
 * The API client's one way onto the network: at most `maxInFlight` HTTP attempts at once, across every
 * caller, let through first come first served, and none sent while the API has asked the client to
 * slow down. A slot is held for one attempt only, never across a retry's back-off, so callers that
 * wait cannot hold up those that could send: nothing deadlocks, whatever the bound.
 */
import { setTimeout as sleep } from "node:timers/promises";

export class RequestGate {
  readonly #maxInFlight: number;
  #inFlight = 0;
  /** What grants each waiting caller its slot, oldest first. */
  readonly #queue: Array<() => void> = [];
  /** No attempt is sent before this time (`performance.now()` ms): the API's request to slow down holds for all. */
  #notBefore = 0;

  /** @param maxInFlight Most attempts in flight at once: a whole number ≥ 1, or Infinity for no bound. */
  constructor(maxInFlight: number) {
    if (!(maxInFlight === Number.POSITIVE_INFINITY || (Number.isInteger(maxInFlight) && maxInFlight >= 1)))
      throw new RangeError(`maxInFlight must be a whole number of at least 1, not ${maxInFlight}`);
    this.#maxInFlight = maxInFlight;
  }

  /** Holds back every attempt not yet sent for `ms` from now (a longer pause already on stays). */
  pause(ms: number): void {
    if (ms > 0) this.#notBefore = Math.max(this.#notBefore, performance.now() + ms);
  }

  /**
   * Runs one HTTP attempt in a slot: waits its turn, then out any pause, then sends. `signal` ends
   * the wait at once (the caller's place in the queue goes to the next one) and rejects with its reason.
   */
  async run<T>(attempt: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    await this.#acquire(signal);
    try {
      // The pause is waited out holding the slot, so the queue's order survives it; no slot could send meanwhile.
      for (let ms = this.#notBefore - performance.now(); ms > 0; ms = this.#notBefore - performance.now())
        await sleep(ms, undefined, signal ? { signal } : {});
      return await attempt();
    } finally {
      this.#release();
    }
  }

  #acquire(signal: AbortSignal | undefined): Promise<void> {
    signal?.throwIfAborted();
    if (this.#inFlight < this.#maxInFlight && this.#queue.length === 0) {
      this.#inFlight++;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        const at = this.#queue.indexOf(grant);
        if (at >= 0) this.#queue.splice(at, 1);
        reject(signal?.reason);
      };
      const grant = () => {
        signal?.removeEventListener("abort", onAbort);
        resolve();
      };
      this.#queue.push(grant);
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  /** Hands the slot to the oldest waiter, or frees it. */
  #release(): void {
    const grant = this.#queue.shift();
    if (grant) grant();
    else this.#inFlight--;
  }
}
