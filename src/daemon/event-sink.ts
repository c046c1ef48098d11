/**
 * The daemon's side of the events stream: the webhook delivery loop runs while this process holds
 * the writer lease (one sender, so the stored cursor has one writer), woken by each commit; and
 * retention is applied after each run, saying loudly when undelivered events had to go.
 */
import type { App } from "../app.js";
import type { Config } from "../config/config.js";
import { type Delivery, startDelivery } from "../events/deliver.js";
import { parseSecrets } from "../events/sign.js";

const DAY_MS = 86_400_000;

export interface EventSink {
  /** The writer lease was taken (true) or lost or given up (false). */
  leased(held: boolean): void;
  /** Applies retention; run by the lease holder after each run. Never throws. */
  prune(): Promise<void>;
  /** Stops the delivery loop, if running; its message in flight stays stored for the next start. */
  stop(): Promise<void>;
}

export function createEventSink(
  config: Config,
  app: Pick<App, "store" | "clock" | "logger" | "events">,
): EventSink {
  const { store, clock, logger } = app;
  const url = config.eventsWebhookUrl;
  const secrets = config.eventsWebhookSecret === undefined ? [] : parseSecrets(config.eventsWebhookSecret);
  let running: { controller: AbortController; delivery: Delivery; unsubscribe: () => void } | undefined;

  const stop = async () => {
    const was = running;
    running = undefined;
    if (!was) return;
    was.unsubscribe();
    was.controller.abort(new Error("the daemon gave up the writer lease or is stopping"));
    await was.delivery.stopped;
  };

  return {
    leased(held) {
      if (!held) {
        void stop();
        return;
      }
      if (running || url === undefined) return;
      const controller = new AbortController();
      const delivery = startDelivery({
        store: store.events,
        clock,
        logger,
        signal: controller.signal,
        url,
        secrets,
        batch: config.eventsWebhookBatch,
        allowInsecure: config.eventsWebhookAllowInsecure,
      });
      running = { controller, delivery, unsubscribe: app.events.subscribe(() => delivery.wake()) };
    },
    async prune() {
      const now = clock.now();
      const before = new Date(now.getTime() - config.eventsRetentionDays * DAY_MS).toISOString();
      try {
        const { pruned, dropped } = await store.events.pruneEvents(
          before,
          config.eventsMaxUndelivered,
          url !== undefined,
          now.toISOString(),
        );
        if (dropped > 0)
          logger.warn(
            { dropped, cap: config.eventsMaxUndelivered },
            `dropped the ${dropped} oldest undelivered events: more than EVENTS_MAX_UNDELIVERED were waiting for the webhook`,
          );
        if (pruned > 0)
          logger.debug({ pruned, before }, "pruned delivered events past EVENTS_RETENTION_DAYS");
      } catch (err) {
        logger.warn({ err }, "could not prune the events stream; tried again after the next run");
      }
    },
    stop,
  };
}
