/** The kinds of failure: config errors, API errors, pages a store lost, and the rest wrapped with `{ cause }` and context. */
import type { UpsertCounts } from "./sync/ports.js";

/** Bad flags, environment or config file. The CLI exits with code 2. */
export class ConfigError extends Error {
  override name = "ConfigError";
  /** Ends every usage error so the user knows what to do next. */
  readonly hint: string | undefined;
  constructor(message: string, options?: { hint?: string; cause?: unknown }) {
    super(message, { cause: options?.cause });
    this.hint = options?.hint;
  }
}

/** A request to the partner API that failed: an HTTP status, a transport fault, or a bad body. */
export class ApiError extends Error {
  override name = "ApiError";
  /** HTTP status, or undefined when no response arrived (network error, timeout). */
  readonly status: number | undefined;
  /** Whether trying again later could succeed (network, timeout, 408, 429, 5xx, bad body). */
  readonly retryable: boolean;
  /** How long the server asked us to wait (Retry-After), in ms, before our cap; when it said so. */
  readonly retryAfterMs: number | undefined;
  /** HTTP attempts made before giving up, when the error comes from a retrying client. */
  readonly attempts: number | undefined;
  /** What the operator should check, when the answer says (e.g. the token, the base URL). */
  readonly hint: string | undefined;
  constructor(
    message: string,
    options: Partial<Pick<ApiError, "status" | "retryAfterMs" | "attempts" | "hint">> & {
      retryable: boolean;
      cause?: unknown;
    },
  ) {
    super(message, { cause: options.cause });
    this.status = options.status;
    this.retryable = options.retryable;
    this.retryAfterMs = options.retryAfterMs;
    this.attempts = options.attempts;
    this.hint = options.hint;
  }
}

/** The file's text, or a ConfigError saying `what` (a setting and its path) cannot be read, and why. */
export function readOrRefuse(what: string, read: () => string, hint: string): string {
  try {
    return read();
  } catch (err) {
    const reason = (err as NodeJS.ErrnoException).code ?? "unreadable";
    throw new ConfigError(`${what} cannot be read (${reason})`, { hint, cause: err });
  }
}

/** Wraps anything thrown with a sentence of context, keeping the original as `cause`. */
export function wrapError(context: string, err: unknown): Error {
  return new Error(`${context}: ${coerceError(err).message}`, { cause: err });
}

/** The first error of the given class in `err`'s cause chain, if any. */
export function findCause<T extends Error>(
  err: unknown,
  type: abstract new (...args: never[]) => T,
): T | undefined {
  return [...causeChain(err)].find((e): e is T => e instanceof type);
}

/** `err` and its causes, outermost first; ten at most, so a cycle ends. */
function* causeChain(err: unknown): Generator<Error> {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 10; e = e.cause, depth++) yield e;
}

/** Turns an unknown throw into an Error, so callers can rely on `.message`. */
export function coerceError(err: unknown): Error {
  if (err instanceof Error) return err;
  return new Error(typeof err === "string" ? err : JSON.stringify(err), { cause: err });
}

/** A stop, or a failure the client retries: the run ends and the next one tries again, not a fault to step past. */
export function isTransient(err: unknown): boolean {
  return isAbortError(err) || (err instanceof ApiError && err.retryable);
}

/** True when the failure was an abort we asked for (shutdown), not a fault. */
export function isAbortError(err: unknown): boolean {
  return [...causeChain(err)].some((e) => e.name === "AbortError");
}

/**
 * Saved pages that never committed (store/batch.ts), with what their saves had counted: a run that
 * counted them as they were saved takes them back (sync/run.ts), so it records what the mirror holds.
 */
export class PagesLost extends Error {
  override name = "PagesLost";
  constructor(
    cause: unknown,
    readonly uncommitted: UpsertCounts,
  ) {
    // The reason in the message too: a run's failure is logged by its message.
    const reason = cause instanceof Error ? cause.message : String(cause);
    super(`store: saved pages were not committed (${reason}); the next run reads them again`, { cause });
  }
}
