/**
 * The daemon's side of the events stream: the webhook delivery loop runs while this process holds
 * the writer lease (one sender, so the stored cursor has one writer), woken by each commit; and
 * retention (events/retention.ts) is applied after each run. It gives the loop its ports: the
 * mirror's events store, and got's POST (events/post.ts).
 */
import type { App } from "../app.js";
import type { Config } from "../config/config.js";
import { type Delivery, startDelivery } from "../events/deliver.js";
import { postMessage } from "../events/post.js";
import { applyRetention } from "../events/retention.js";
import { parseSecrets } from "../events/sign.js";

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
        post: postMessage,
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
    prune: () =>
      applyRetention({ store: store.events, clock, logger }, { ...config, webhook: url !== undefined }),
    stop,
  };
}
