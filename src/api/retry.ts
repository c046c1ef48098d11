/**
 * The API client's retry policy: full-jitter backoff and a capped `Retry-After`. p-retry runs the
 * loop with no delay of its own, because it knows nothing of `Retry-After`.
 */
import { setTimeout as sleep } from "node:timers/promises";
import pRetry from "p-retry";
import { ApiError } from "../errors.js";

export interface RetryPolicy {
  /** Retries after the first attempt. */
  maxRetries: number;
  /** Ceiling of the first backoff, in ms; doubled each retry. */
  minBackoffMs: number;
  /** Largest backoff ceiling, in ms. */
  maxBackoffMs: number;
  /** Longest `Retry-After` honoured, in ms; longer asks are capped. */
  maxRetryAfterMs: number;
  /** Uniform random source in [0, 1); injected so tests are deterministic. */
  random: () => number;
}

/** What the caller learns about each failed attempt (for metrics and logs). */
export interface FailedAttempt {
  error: unknown;
  /** 1-based attempt number. */
  attempt: number;
  /** Whether another attempt follows. */
  willRetry: boolean;
  /** How long we wait before it, in ms (0 when none follows). */
  waitMs: number;
}

/** Backoff before retry `retry` (1-based), ms: uniform in [0, min(max, min · 2^(retry-1))]. */
export function backoffMs(retry: number, policy: RetryPolicy): number {
  const ceiling = Math.min(policy.maxBackoffMs, policy.minBackoffMs * 2 ** Math.max(0, retry - 1));
  return Math.round(policy.random() * ceiling);
}

/** A `Retry-After` header (seconds, or an HTTP date against `nowMs`) as a wait in ms, or undefined. */
export function parseRetryAfter(value: string | undefined, nowMs: number): number | undefined {
  const text = value?.trim();
  if (!text) return undefined;
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
}

/** The wait before retry number `retry` (1-based): max(backoff, capped Retry-After), in ms. */
export function retryDelayMs(error: unknown, retry: number, policy: RetryPolicy): number {
  const asked = error instanceof ApiError ? (error.retryAfterMs ?? 0) : 0;
  return Math.max(backoffMs(retry, policy), Math.min(asked, policy.maxRetryAfterMs));
}

function isRetryable(error: unknown): error is ApiError {
  return error instanceof ApiError && error.retryable;
}

/**
 * Runs `run` until it succeeds, throws anything but a retryable ApiError, or the retries are spent;
 * `signal` cuts a wait short. The waits happen here, outside `run`, so they hold no request slot (gate.ts). Returns the value and its attempts; a final ApiError carries them too.
 */
export async function withRetry<T>(
  run: (attempt: number) => Promise<T>,
  options: { policy: RetryPolicy; signal?: AbortSignal | undefined; onFailure?: (f: FailedAttempt) => void },
): Promise<{ value: T; attempts: number }> {
  const { policy, signal } = options;
  let attempts = 0;
  try {
    const value = await pRetry(
      (n) => {
        attempts = n;
        return run(n);
      },
      {
        retries: policy.maxRetries,
        minTimeout: 0,
        ...(signal ? { signal } : {}),
        shouldRetry: ({ error }) => isRetryable(error),
        onFailedAttempt: async ({ error, attemptNumber, retriesLeft }) => {
          const willRetry = isRetryable(error) && retriesLeft > 0 && !signal?.aborted;
          const waitMs = willRetry ? retryDelayMs(error, attemptNumber, policy) : 0;
          options.onFailure?.({ error, attempt: attemptNumber, willRetry, waitMs });
          if (waitMs > 0) await sleep(waitMs, undefined, signal ? { signal } : {});
        },
      },
    );
    return { value, attempts };
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    // The final ApiError says how many attempts it took.
    const suffix = attempts > 1 ? ` (after ${attempts} attempts)` : "";
    throw new ApiError(`${err.message}${suffix}`, { ...err, attempts, cause: err.cause });
  }
}
