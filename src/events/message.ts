/**
 * A webhook message: a run of consecutive events in one body. Its bytes depend only on the events,
 * so a retry (also after a kill) rebuilds exactly what the first attempt sent from the stored range.
 */
import type { PendingMessage, StoredEvent } from "./ports.js";

/** Most events one message may carry (the upper bound of `EVENTS_WEBHOOK_BATCH`). */
export const MAX_BATCH = 1000;

/** A message ready to send: what `event_delivery` stores, and the body it stands for. */
export interface Message extends PendingMessage {
  body: string;
}

/**
 * An event as consumers see it, pulled or pushed: its columns in front (id, type, bookingId, at),
 * then the stored JSON after its `{` (booking, and changes for a change). The one place the bytes
 * are built, so pull and push cannot differ.
 */
export function servedEvent(event: StoredEvent): string {
  const { id, type, bookingId, at, data } = event;
  const head = `{"id":${id},"type":${JSON.stringify(type)},"bookingId":${JSON.stringify(bookingId)},"at":${JSON.stringify(at)}`;
  return data === "{}" ? `${head}}` : `${head},${data.slice(1)}`;
}

/** The `webhook-id`: `msg_<first>_<last>` live, `msg_<first>_<last>_replay<id>` for a replay. */
export function messageId(first: number, last: number, replay: number | null): string {
  const live = `msg_${first}_${last}`;
  return replay === null ? live : `${live}_replay${replay}`;
}

/**
 * The message carrying `events` (ascending, consecutive in the stream, at least one):
 * `{"type":"booking.events","timestamp":<at of the last>,"data":{"events":[…]}}`.
 */
export function buildMessage(events: readonly StoredEvent[], replay: number | null): Message {
  const first = events[0];
  const last = events.at(-1);
  if (!first || !last) throw new Error("a webhook message needs at least one event");
  const body =
    `{"type":"booking.events","timestamp":${JSON.stringify(last.at)},` +
    `"data":{"events":[${events.map(servedEvent).join(",")}]}}`;
  return { id: messageId(first.id, last.id, replay), first: first.id, last: last.id, replay, body };
}
