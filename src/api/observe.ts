/** How each HTTP attempt reaches metrics and the log (attempts at trace, retries at warn), token scrubbed. */
import { ApiError } from "../errors.js";
import type { Logger } from "../sync/ports.js";
import type { RequestGate } from "./gate.js";
import type { Endpoint } from "./response.js";
import type { FailedAttempt, RetryPolicy } from "./retry.js";

/** One HTTP attempt, as seen by metrics. */
export interface RequestEvent {
  endpoint: Endpoint;
  /** "ok": a valid page; "retry": a transient failure another attempt follows; "error": the call gives up. */
  outcome: "ok" | "retry" | "error";
  /** HTTP status, or undefined when no response arrived (network error, timeout, abort). */
  status?: number | undefined;
  /** Wall time of the attempt, in ms. */
  durationMs: number;
  /** 1-based attempt number within the call. */
  attempt: number;
}

/** A logger that may also take one `trace` line per attempt. */
export type AttemptLogger = Logger & { trace?: (obj: object, msg?: string) => void };

/** What observing an attempt needs from the client. */
export interface ObserveCtx {
  /** Removes the token from any text that leaves the client. */
  scrub: (text: string) => string;
  policy: Pick<RetryPolicy, "maxRetries" | "maxRetryAfterMs">;
  options: {
    onRequest?: ((event: RequestEvent) => void) | undefined;
    logger?: AttemptLogger | undefined;
  };
  /** Where a request to slow down pauses every request of the client: the limit is the API's, not the page's. */
  gate: Pick<RequestGate, "pause">;
}

/**
 * Reports a failed attempt and logs the retry, if one follows. A 429 or Retry-After pauses every
 * request of the client for as long as this one waits (or, when it gives up, for the capped Retry-After).
 */
export function reportFailure(
  ctx: ObserveCtx,
  endpoint: Endpoint,
  query: Record<string, string>,
  f: FailedAttempt,
  durationMs: number,
): void {
  const { status, retryAfterMs } =
    f.error instanceof ApiError ? f.error : { status: undefined, retryAfterMs: undefined };
  if (status === 429 || retryAfterMs !== undefined)
    ctx.gate.pause(f.willRetry ? f.waitMs : Math.min(retryAfterMs ?? 0, ctx.policy.maxRetryAfterMs));
  const cause = ctx.scrub(f.error instanceof Error ? f.error.message : String(f.error));
  observe(
    ctx,
    query,
    { endpoint, outcome: f.willRetry ? "retry" : "error", status, durationMs, attempt: f.attempt },
    cause,
  );
  if (!f.willRetry) return;
  // At warn, so a host that does not answer is not minutes of silence at the default level.
  const waitS = Math.round(f.waitMs / 100) / 10;
  ctx.options.logger?.warn(
    { endpoint, attempt: f.attempt, maxRetries: ctx.policy.maxRetries, status, cause, waitMs: f.waitMs },
    `partner API request failed (${cause}); retry ${f.attempt} of ${ctx.policy.maxRetries} in ${waitS}s`,
  );
}

/** Reports an attempt to metrics and logs it at trace (the query holds no secret). */
export function observe(
  ctx: ObserveCtx,
  query: Record<string, string>,
  event: RequestEvent,
  cause?: string,
): void {
  ctx.options.onRequest?.(event);
  const durationMs = Math.round(event.durationMs * 10) / 10;
  ctx.options.logger?.trace?.(
    { method: "GET", ...event, durationMs, query, ...(cause === undefined ? {} : { cause }) },
    `GET ${event.endpoint} ${event.status ?? "(no response)"} in ${durationMs} ms`,
  );
}
