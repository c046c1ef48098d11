/**
 * The dictionary's events stream tables: the outbox apps read through `GET /events`, the webhook
 * sink's position in it and the replays asked of it.
 */
import { described, type RelationEntry, UTC, worker } from "./dictionary-entry.js";
import * as schema from "./schema.js";

const bookingEvents = described(schema.bookingEvents, {
  description:
    "The booking events stream (`GET /events`, `booking-sync events`, the webhooks): each booking created, " +
    "changed, marked missing or found back, written with the page that saw it. Pruned after " +
    "`EVENTS_RETENTION_DAYS` once delivered.",
  columns: {
    id: worker("The event's id: increasing in the order the events were committed, never reused."),
    type: worker("`booking.created`, `booking.changed`, `booking.missing` or `booking.back`."),
    bookingId: worker("The booking (`bookings.id`)."),
    at: worker(`When the worker observed it (the page's read time), ${UTC}.`),
    runId: worker("The run that saw it (`sync_runs.id`), when known."),
    data: worker(
      "The event's JSON besides its columns: `{\"booking\":…}`, the booking's summary, and for a change " +
        '`"changes":[…]` after it, each field\'s old and new value as `booking_changes` records them. ' +
        'Served as `{"id":…,"type":…,"bookingId":…,"at":…,` then this JSON after its `{`.',
    ),
  },
});

const eventDelivery = described(schema.eventDelivery, {
  description: "Where the webhook sink (`EVENTS_WEBHOOK_URL`) has got to, and the message it is sending.",
  internal: true,
  columns: {
    name: worker("The sink: `webhook`."),
    endpoint: worker("SHA-256 of the URL last delivered to, hex (never the URL: it may hold a token)."),
    cursor: worker("The last event id delivered; 0 when none."),
    messageId: worker("The `webhook-id` of the message being sent; a retry sends exactly it."),
    messageFirst: worker("The first event id of that message."),
    messageLast: worker("The last event id of that message."),
    messageReplay: worker("The replay it belongs to (`event_replays.id`); NULL for the live stream."),
    attempts: worker("Failed attempts at that message so far."),
    nextAttemptAt: worker(`When the next attempt is due, ${UTC}.`),
    lastError: worker("Why the last failed attempt failed."),
    lastErrorAt: worker(`When it failed, ${UTC}.`),
    lastDeliveredAt: worker(`When a message was last accepted, ${UTC}.`),
    dropped: worker("Undelivered events dropped past `EVENTS_MAX_UNDELIVERED`, in all."),
    droppedAt: worker(`When events were last dropped, ${UTC}.`),
  },
});

const eventReplays = described(schema.eventReplays, {
  description: "Ranges of events `booking-sync events replay` asked the webhook sink to send again.",
  internal: true,
  columns: {
    id: worker("The replay's id, in the order asked."),
    fromId: worker("The first event id to send again."),
    toId: worker("The last event id to send again."),
    nextId: worker("The first event id not sent again yet."),
    requestedAt: worker(`When it was asked, ${UTC}.`),
    finishedAt: worker(`When the whole range was delivered, ${UTC}; NULL until then.`),
  },
});

const eventStream = described(schema.eventStream, {
  description:
    "The events stream's identity: one row, made with the mirror. A mirror made again starts its event " +
    "ids at 1 under a new identity, which `GET /events` (`stream`) and `booking-sync events` show.",
  internal: true,
  columns: {
    id: worker("A random id (32 hex digits), made once by the migration that made this table."),
  },
});

/** The events tables, in the order docs/schema.md lists them. */
export const EVENT_TABLES: Record<string, RelationEntry> = Object.fromEntries([
  bookingEvents,
  eventDelivery,
  eventReplays,
  eventStream,
]);
