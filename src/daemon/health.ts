/**
 * Readiness of the daemon: ready while the last successful sync is recent enough and no fill is under
 * way.
 */
import { type FailingStatus, failingText, nextFailing } from "../store/failing.js";
import { type FillStatus, fillText } from "../store/fill-status.js";
import type { Logger } from "../sync/ports.js";
import { errorText } from "./error-text.js";

/** What /readyz answers with. */
export interface HealthStatus {
  ready: boolean;
  /** One sentence: why ready, or why not. */
  reason: string;
  /** Last successful sync (ISO), null before the first. */
  lastSuccessAt: string | null;
  /** Seconds since the last success, null before the first. */
  ageSeconds: number | null;
  maxAgeSeconds: number;
  /** Failed runs since the last success (or since start-up). */
  failuresSinceSuccess: number;
  /** When the first failed run since the last success started (ISO), else null: how long it has been failing. */
  failingSince: string | null;
  /** Last failure since the last success (ISO), else null. */
  lastFailureAt: string | null;
  /** Message and causes of that failure, else null. */
  lastError: string | null;
}

/** The daemon's readiness state. */
export type Health = ReturnType<typeof createHealth>;

/** Creates the readiness state: ready while the last success is at most `readyMaxAgeSeconds` old, not before the first. */
export function createHealth(options: { readyMaxAgeSeconds: number }) {
  const maxAgeSeconds = options.readyMaxAgeSeconds;
  let lastSuccess: Date | null = null;
  /** The failing streak, by the rule the status page applies to the stored runs (store/failing.ts). */
  let streak: FailingStatus | null = null;
  let lastFailure: { at: Date; error: string } | null = null;

  return {
    /** A sync succeeded at `at`; clears the failure count. */
    recordSuccess(at: Date): void {
      if (lastSuccess === null || at > lastSuccess) lastSuccess = at;
      streak = nextFailing(streak, { status: "success", startedAt: at.toISOString(), error: null });
      lastFailure = null;
    },
    /** A sync that started at `startedAt` failed at `at` with `error`. */
    recordFailure(at: Date, error: unknown, startedAt: Date = at): void {
      const text = errorText(error);
      streak = nextFailing(streak, { status: "failed", startedAt: startedAt.toISOString(), error: text });
      lastFailure = { at, error: text };
    },
    /** Readiness as of `now`. */
    status(now: Date): HealthStatus {
      const failureNote = streak ? `; ${failingText(streak)}` : "";
      const base = {
        lastSuccessAt: lastSuccess?.toISOString() ?? null,
        maxAgeSeconds,
        failuresSinceSuccess: streak?.runs ?? 0,
        failingSince: streak?.since ?? null,
        lastFailureAt: lastFailure?.at.toISOString() ?? null,
        lastError: lastFailure?.error ?? null,
      };
      if (lastSuccess === null) {
        return { ...base, ready: false, ageSeconds: null, reason: `never synced${failureNote}` };
      }
      const ageMs = now.getTime() - lastSuccess.getTime();
      const ready = ageMs <= maxAgeSeconds * 1000;
      const ageSeconds = Math.max(0, Math.round(ageMs / 1000));
      const verdict = ready ? "within" : "older than";
      const reason = `last success at ${base.lastSuccessAt} (${ageSeconds} s ago, ${verdict} ${maxAgeSeconds} s)${failureNote}`;
      return { ...base, ready, ageSeconds, reason };
    },
  };
}

/**
 * Readiness as `status` gives it, with the fill `readFill` reads from the mirror at each call (the
 * committed state, so a standby shows the lease holder's fill too). A read that fails keeps the fill
 * last read, and is logged: a busy database must not make a filling mirror look complete. While a
 * fill's state is stored the mirror is incomplete, so the daemon is not ready (503) however recent
 * its last success, and the reason says how far the fill has got and when it should end.
 */
export function fillReadiness<S extends HealthStatus>(
  status: (now: Date) => S,
  readFill: (now: Date) => Promise<FillStatus | null>,
  logger: Pick<Logger, "warn">,
): (now: Date) => Promise<S & { fill: FillStatus | null }> {
  let last: FillStatus | null = null;
  return async (now) => {
    try {
      last = await readFill(now);
    } catch (err) {
      logger.warn({ err }, "/readyz: could not read the fill's progress; showing the last read");
    }
    const current = status(now);
    if (last === null) return { ...current, fill: null };
    const filling = `filling: ${fillText(last)}`;
    // A standby says first that it waits for the lease: the fill it shows is its holder's.
    const reason = current.reason.startsWith("waiting for the writer lease")
      ? `${current.reason}; the holder is ${filling}`
      : `${filling}; ${current.reason}`;
    return { ...current, ready: false, reason, fill: last };
  };
}
