/**
 * A webhook message: a run of consecutive events in one body, under a webhook-id made once and
 * stored with its range. Its bytes depend only on the events, so a retry (also after a kill) rebuilds
 * exactly what the first attempt sent from the stored range, and sends it under the stored id.
 */
import { randomBytes } from "node:crypto";
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

/** The random part of a new message's webhook-id: 8 hex characters. */
export type TagSource = () => string;

/** The default `TagSource`: 4 random bytes from node:crypto, in hex. */
export const randomTag: TagSource = () => randomBytes(4).toString("hex");

/**
 * The `webhook-id`: `msg_<first>_<last>_<tag>` live, `msg_<first>_<last>_replay<id>_<tag>` for a
 * replay. Event and replay ids start again at 1 in a new mirror: the random tag keeps its messages
 * apart from those a receiver took from the old one, which it would otherwise drop as seen.
 */
export function messageId(first: number, last: number, replay: number | null, tag: string): string {
  const range = `msg_${first}_${last}`;
  return replay === null ? `${range}_${tag}` : `${range}_replay${replay}_${tag}`;
}

/**
 * The body carrying `events` (ascending, consecutive in the stream, at least one):
 * `{"type":"booking.events","timestamp":<at of the last>,"data":{"events":[…]}}`.
 */
export function messageBody(events: readonly StoredEvent[]): string {
  const last = events.at(-1);
  if (!last) throw new Error("a webhook message needs at least one event");
  return (
    `{"type":"booking.events","timestamp":${JSON.stringify(last.at)},` +
    `"data":{"events":[${events.map(servedEvent).join(",")}]}}`
  );
}

/**
 * A new message carrying `events` (see `messageBody`), under a new webhook-id with `tag`. A stored
 * message is never rebuilt with this: it keeps the id it was stored with.
 */
export function buildMessage(events: readonly StoredEvent[], replay: number | null, tag: string): Message {
  const body = messageBody(events);
  const first = events[0]?.id as number;
  const last = events.at(-1)?.id as number;
  return { id: messageId(first, last, replay, tag), first, last, replay, body };
}

/** What `event_delivery` stores of `message`: its id and range. */
export function pendingOf({ id, first, last, replay }: Message): PendingMessage {
  return { id, first, last, replay };
}
