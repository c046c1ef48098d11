/**
 * Which message the webhook gets next: the pending one (a retry sends exactly it), then the oldest
 * unfinished replay, then the live events after the cursor.
 */
import type { Logger } from "../sync/ports.js";
import { buildMessage, MAX_BATCH, type Message } from "./message.js";
import type { DeliveryState, EventStore, PendingMessage } from "./ports.js";

/** A message to send, and whether it is new (to be stored as pending before its first attempt). */
export interface Chosen {
  message: Message;
  fresh: boolean;
}

/**
 * The next message for a sink in `state`, or null when nothing waits. Replays with nothing left in
 * their range (pruned since, or past the last event) are finished here, at `at` (ISO).
 */
export async function nextMessage(
  store: EventStore,
  state: DeliveryState,
  batch: number,
  at: string,
  logger: Logger,
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
  for (;;) {
    const replay = await store.nextReplay();
    if (!replay) break;
    const events = await store.readEvents(replay.next - 1, batch, replay.to);
    if (events.length > 0) return { message: buildMessage(events, replay.id), fresh: true };
    await store.advanceReplay(replay.id, replay.to + 1, at, {});
  }
  const events = await store.readEvents(state.cursor, batch);
  return events.length > 0 ? { message: buildMessage(events, null), fresh: true } : null;
}

/** The stored pending message rebuilt byte for byte, or null when its events are no longer all there. */
async function pendingMessage(
  store: EventStore,
  pending: PendingMessage,
  cursor: number,
): Promise<Message | null> {
  // A live message the cap dropped (the cursor moved past it) is gone, whatever rows are left.
  if (pending.replay === null && cursor >= pending.last) return null;
  const events = await store.readEvents(pending.first - 1, MAX_BATCH, pending.last);
  if (events[0]?.id !== pending.first || events.at(-1)?.id !== pending.last) return null;
  return { ...buildMessage(events, pending.replay), id: pending.id };
}
