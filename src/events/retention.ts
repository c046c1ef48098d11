/**
 * Retention of the events stream, applied by whoever writes the mirror on schedule: the daemon's
 * lease holder after each run, and `booking-sync sync` from cron. Delivered events go after
 * `EVENTS_RETENTION_DAYS`; undelivered ones stay up to `EVENTS_MAX_UNDELIVERED`, past which the
 * oldest are dropped, said loudly: never silently.
 */
import type { Clock, Logger } from "../sync/ports.js";
import type { EventStore } from "./ports.js";

const DAY_MS = 86_400_000;

export interface RetentionSettings {
  eventsRetentionDays: number;
  eventsMaxUndelivered: number;
  /** Whether a webhook is configured: then only what it has taken is old enough to go. */
  webhook: boolean;
}

/** Applies retention now; logs, never throws (the next run tries again). */
export async function applyRetention(
  deps: { store: Pick<EventStore, "pruneEvents">; clock: Clock; logger: Logger },
  settings: RetentionSettings,
): Promise<void> {
  const { store, clock, logger } = deps;
  const now = clock.now();
  const before = new Date(now.getTime() - settings.eventsRetentionDays * DAY_MS).toISOString();
  const cap = settings.eventsMaxUndelivered;
  try {
    const { pruned, dropped } = await store.pruneEvents(before, cap, settings.webhook, now.toISOString());
    if (dropped > 0)
      logger.warn(
        { dropped, cap },
        `dropped the ${dropped} oldest undelivered events: more than EVENTS_MAX_UNDELIVERED were waiting for the webhook`,
      );
    if (pruned > 0) logger.debug({ pruned, before }, "pruned events past EVENTS_RETENTION_DAYS");
  } catch (err) {
    logger.warn({ err }, "could not prune the events stream; tried again after the next run");
  }
}
