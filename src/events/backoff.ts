/**
 * When a failed webhook message is tried again: exponential backoff with jitter, or later when the
 * receiver asked for it with `Retry-After`. Pure, so a table of cases pins it down.
 */
import { parseRetryAfter } from "../api/retry.js";

/** The first wait, in ms (1 s), doubled after each further failure. */
export const FIRST_BACKOFF_MS = 1000;
/** The longest backoff, in ms (10 min): a receiver back up is found within that. */
export const MAX_BACKOFF_MS = 10 * 60_000;
/** The longest `Retry-After` honoured, in ms (1 h); a longer ask is capped. */
export const MAX_RETRY_AFTER_MS = 60 * 60_000;

/**
 * The wait in ms before trying a message again, after `attempts` failed attempts (1 for the first):
 * min(10 min, 1 s · 2^(attempts−1)) scaled by a jitter in [50%, 100%] from `random` (uniform in
 * [0, 1)), or the receiver's `Retry-After` (seconds, or an HTTP date read against `now`) capped at
 * 1 h, whichever is longer.
 */
export function retryDelay(
  attempts: number,
  retryAfterHeader: string | undefined,
  now: Date,
  random: () => number,
): number {
  const exponent = Math.min(Math.max(0, attempts - 1), 30);
  const ceiling = Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** exponent);
  // Jitter spreads many senders; keeping half the ceiling stops a retry storm at the lower end.
  const backoff = Math.round(ceiling * (0.5 + 0.5 * random()));
  const asked = parseRetryAfter(retryAfterHeader, now.getTime()) ?? 0;
  return Math.max(backoff, Math.min(asked, MAX_RETRY_AFTER_MS));
}
