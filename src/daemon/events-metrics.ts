/**
 * The events stream's metrics, read from the database at scrape time (`readEventsStatus`, the one
 * read `status` and the status page show too), so every daemon of a mirror, the lease holder or a
 * standby, reports the same figures. The webhook's are labelled `sink`, so a mirror that never had a
 * webhook has none of them rather than a reassuring 0.
 */
import { Counter, Gauge, type Registry } from "prom-client";
import type { EventsStatus } from "../store/events-status.js";
import type { Awaitable } from "../sync/ports.js";

/** Reads the events stream's figures; null when the mirror has no events tables. */
export type ReadEvents = () => Awaitable<EventsStatus | null>;

/** Declares the events metrics on `registry`, named `prefix` + suffix. */
export function defineEventMetrics(registry: Registry, prefix: string, read: ReadEvents): void {
  // One read per scrape: prom-client collects every metric at once, so they share the one in flight.
  let reading: Promise<EventsStatus | null> | undefined;
  const current = () => {
    reading ??= Promise.resolve()
      .then(read)
      // A scrape must not fail because the database is closing: the figures are simply absent.
      .catch(() => null)
      .finally(() => {
        reading = undefined;
      });
    return reading;
  };
  const registers = [registry];
  const sink = (
    suffix: string,
    help: string,
    value: (d: NonNullable<EventsStatus["delivery"]>) => number,
    Metric: typeof Gauge | typeof Counter = Gauge,
  ) =>
    new Metric({
      name: `${prefix}${suffix}`,
      help,
      labelNames: ["sink"] as const,
      registers,
      async collect() {
        const delivery = (await current())?.delivery;
        this.reset();
        if (delivery) (this as Gauge<"sink">).inc({ sink: "webhook" }, value(delivery));
      },
    });
  new Gauge({
    name: `${prefix}events_last_id`,
    help: "The newest booking event's id (0 before the first), read from the database.",
    registers,
    async collect() {
      this.set((await current())?.lastId ?? 0);
    },
  });
  sink("events_delivered_id", "The last event id the webhook accepted (its cursor).", (d) => d.cursor);
  sink("events_lag_events", "Events stored that the webhook has not accepted yet.", (d) => d.lagEvents);
  sink(
    "events_lag_seconds",
    "Seconds since the oldest event the webhook has not accepted was recorded; 0 when none waits.",
    (d) => d.lagSeconds,
  );
  sink(
    "events_failed_attempts",
    "Failed attempts at the message the webhook is being sent; 0 once a message is taken.",
    (d) => d.attempts,
  );
  sink(
    "events_dropped_total",
    "Undelivered events dropped past EVENTS_MAX_UNDELIVERED, in all; read from the database (event_delivery.dropped), so it survives restarts.",
    (d) => d.dropped,
    Counter,
  );
}
