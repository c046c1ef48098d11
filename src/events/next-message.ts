/**
 * Which message the webhook gets next: the pending one (a retry sends exactly it), then the oldest
 * unfinished replay, then the live events after the cursor. And the one exception to "a retry sends
 * exactly it": `cutPending`, for a message the receiver cannot have taken.
 */
import type { Logger } from "../sync/ports.js";
import { buildMessage, MAX_BATCH, type Message, messageBody, pendingOf, type TagSource } from "./message.js";
import type {
  DeliveryState,
  EventStore,
  PendingMessage,
  Replay,
  SavedDelivery,
  StoredEvent,
} from "./ports.js";

/** A message to send, and whether it is new (to be stored as pending before its first attempt). */
export interface Chosen {
  message: Message;
  fresh: boolean;
}

/** The sink's state as a write returned it, and the message that write stored as pending. */
export interface Held {
  state: SavedDelivery;
  message: Message;
}

/**
 * A live message the cap cut into (the cursor moved past its first event) cannot be sent as it was,
 * whatever rows are left: retention may prune what the cursor passed, one by one.
 */
const cutByCap = (m: { replay: number | null; first: number }, cursor: number) =>
  m.replay === null && cursor >= m.first;

/**
 * The message `held` says the last write stored, to send without reading it back; undefined when
 * there is none, or the cap has moved the cursor into it since (then `nextMessage` says so).
 */
export function heldMessage(held: Held | undefined, state: DeliveryState): Chosen | undefined {
  const message = held?.message;
  if (!message || state.pending?.id !== message.id) return undefined;
  if (cutByCap(message, state.cursor)) return undefined;
  return { message, fresh: false };
}

/**
 * The next message for a sink in `state`, or null when nothing waits; a new one gets its webhook-id's
 * tag from `tag`. Replays with nothing left in their range (pruned since, or past the last event) are
 * finished here, at `at` (ISO). `replays` false: a write just said none waits, so none is looked for.
 */
export async function nextMessage(
  store: EventStore,
  state: DeliveryState,
  batch: number,
  at: string,
  logger: Logger,
  tag: TagSource,
  replays = true,
): Promise<Chosen | null> {
  if (state.pending) {
    const again = await pendingMessage(store, state.pending, state.cursor);
    if (again) return { message: again, fresh: false };
    logger.warn(
      { webhookId: state.pending.id },
      `webhook message ${state.pending.id} cannot be sent again as it was: events of its range were ` +
        "pruned or dropped since; what is left of it goes in a new message",
    );
  }
  while (replays) {
    const replay = await store.nextReplay();
    if (!replay) break;
    const events = await store.readEvents(replay.next - 1, batch, replay.to);
    if (events[0]?.id !== replay.next) await prunedBefore(store, replay, events[0]?.id, logger);
    if (events.length > 0) return { message: buildMessage(events, replay.id, tag()), fresh: true };
    await store.advanceReplay(replay.id, replay.to + 1, at, {});
  }
  const events = await store.readEvents(state.cursor, batch);
  return events.length > 0 ? { message: buildMessage(events, null, tag()), fresh: true } : null;
}

/**
 * Says so when retention pruned the start of `replay`'s range before it was sent (asked for after, as
 * `events replay --from 1`): it starts at `next`, the oldest event kept, or finishes with nothing.
 * Once asked for, retention keeps what it has left. A gap of ids that were never events (a rolled
 * back transaction's) is not pruning: the oldest event kept is then not above `replay.next`.
 */
async function prunedBefore(store: EventStore, replay: Replay, next: number | undefined, logger: Logger) {
  const first = await store.firstEventId();
  if (first !== 0 && first <= replay.next) return;
  const upTo = first === 0 ? replay.to : Math.min(replay.to, first - 1);
  logger.warn(
    { replay: replay.id, from: replay.next, to: upTo },
    `replay ${replay.id}: events ${replay.next} to ${upTo} were pruned before it reached them ` +
      `(EVENTS_RETENTION_DAYS); ${next === undefined ? "nothing is left to send" : `it starts at ${next}`}`,
  );
}

/**
 * The stored pending message rebuilt byte for byte under its stored id, or null when its events are
 * no longer all there.
 */
async function pendingMessage(
  store: EventStore,
  pending: PendingMessage,
  cursor: number,
): Promise<Message | null> {
  const events = await pendingEvents(store, pending, cursor);
  if (!events) return null;
  const { id, first, last, replay } = pending;
  return { id, first, last, replay, body: messageBody(events) };
}

/** The events of the stored pending message, or null when they are no longer all there. */
async function pendingEvents(
  store: EventStore,
  pending: PendingMessage,
  cursor: number,
): Promise<StoredEvent[] | null> {
  if (cutByCap(pending, cursor)) return null;
  const events = await store.readEvents(pending.first - 1, MAX_BATCH, pending.last);
  if (events[0]?.id !== pending.first || events.at(-1)?.id !== pending.last) return null;
  return events;
}

/** What `cutPending` is asked to do. */
export interface CutRequest {
  pending: PendingMessage;
  /** The live cursor now. */
  cursor: number;
  /** How many of the pending message's `held` events the message replacing it keeps. */
  keep: (held: number) => number;
  /** Why, for the warning. */
  why: string;
  /** More of the sink's state to save with it (the answer that led here). */
  change?: Partial<DeliveryState>;
  /** The tag of the new message's webhook-id: it is a new message. */
  tag: TagSource;
}

/**
 * Replaces the pending message by its first `keep(held)` events, a message of its own under a new
 * webhook-id (`messageId(first, mid, replay, tag)`) with a fresh backoff, and warns naming both ids, the
 * sizes and `why`; the rest follows as later messages (from the cursor, or the replay's next id).
 * False, changing nothing, when that keeps every event or its events are no longer all there.
 * Only for a message the receiver cannot have taken (it answered 413), or when the operator lowered
 * `EVENTS_WEBHOOK_BATCH` below it: every other retry resends exactly the stored message.
 */
export async function cutPending(store: EventStore, logger: Logger, request: CutRequest): Promise<boolean> {
  const { pending } = request;
  const events = await pendingEvents(store, pending, request.cursor);
  const kept = events ? Math.max(1, Math.trunc(request.keep(events.length))) : 0;
  if (!events || kept >= events.length) return false;
  const message = buildMessage(events.slice(0, kept), pending.replay, request.tag());
  const { id, body } = message;
  const reset = { pending: pendingOf(message), attempts: 0, nextAttemptAt: null };
  await store.saveDelivery({ ...request.change, ...reset });
  logger.warn(
    {
      webhookId: pending.id,
      newWebhookId: id,
      events: events.length,
      newEvents: kept,
      newBytes: Buffer.byteLength(body),
    },
    `webhook message ${pending.id} (${events.length} events) is replaced by ${id} (its first ${kept}, ` +
      `the rest in later messages): ${request.why}`,
  );
  return true;
}
