/**
 * The booking events stream as its consumers and its delivery loop see the mirror: an outbox the
 * page writes fill in the same transaction (store/mirror/plan.ts), read by id, and the one webhook
 * sink's delivery state. Both databases implement it. And the loop's one other port: the POST of
 * one attempt (events/post.ts posts with got; the daemon's event sink wires it).
 */
import type { Awaitable } from "../sync/ports.js";

/** An event as stored: its columns, and as JSON what is not a column (`events/message.ts` serves it). */
export interface StoredEvent {
  id: number;
  /** `booking.created`, `booking.changed`, `booking.missing` or `booking.back`. */
  type: string;
  bookingId: string;
  /** When the mirror observed it (ISO 8601 UTC). */
  at: string;
  /** `{"booking":…}`, with `"changes":[…]` after it for a change. */
  data: string;
}

/** A message fixed before its first attempt, so that every retry sends exactly it. */
export interface PendingMessage {
  id: string;
  first: number;
  last: number;
  /** The replay it belongs to; null for the live stream. */
  replay: number | null;
}

/** The webhook sink's state, as `event_delivery` keeps it. */
export interface DeliveryState {
  /** sha256 (hex) of the URL last delivered to; null before the first delivery. */
  endpoint: string | null;
  /** The last event id delivered on the live stream; 0 when none. */
  cursor: number;
  pending: PendingMessage | null;
  attempts: number;
  nextAttemptAt: string | null;
  lastError: string | null;
  lastErrorAt: string | null;
  lastDeliveredAt: string | null;
  /** Undelivered events dropped past the cap, in all; and when last. */
  dropped: number;
  droppedAt: string | null;
}

/** The sink's state as a write left it, read by the write itself. */
export interface SavedDelivery extends DeliveryState {
  /** Whether a replay was waiting to be sent (one not finished) when the write was made. */
  replayWaiting: boolean;
}

/** A replay asked for by `events replay`; `next` is the first id not yet sent again. */
export interface Replay {
  id: number;
  from: number;
  to: number;
  next: number;
}

/** What tells a consumer whether its place (the last id it read) is in this mirror's stream. */
export interface StreamBounds {
  /** The oldest event kept's id (older ones were pruned), 0 when none. */
  first: number;
  /**
   * The newest id this mirror has ever given an event, pruned since or not; 0 before the first;
   * null when this reader cannot know it (a PostgreSQL role that may not read the sequence).
   */
  assigned: number | null;
  /** The stream's identity, made once with the mirror; null in a mirror not migrated since (read only). */
  stream: string | null;
}

/** The mirror's side of the events stream. */
export interface EventStore {
  /** Events with id > `after`, ascending, at most `limit` (and at most `to` when given). */
  readEvents(after: number, limit: number, to?: number): Awaitable<StoredEvent[]>;
  /** The newest event's id, 0 when none. */
  lastEventId(): Awaitable<number>;
  /** The oldest event kept's id (older ones were pruned), 0 when none. */
  firstEventId(): Awaitable<number>;
  /** Where the stream stands, for a consumer to check its place against: see `StreamBounds`. */
  bounds(): Awaitable<StreamBounds>;
  /** The webhook sink's state (the initial state when never written). */
  readDelivery(): Awaitable<DeliveryState>;
  /** Writes the parts of the sink's state given, committed before it resolves; the state after it. */
  saveDelivery(change: Partial<DeliveryState>): Awaitable<SavedDelivery>;
  /** The oldest replay not finished, or null. */
  nextReplay(): Awaitable<Replay | null>;
  /** Records a replay request; returns its id. */
  requestReplay(from: number, to: number, at: string): Awaitable<number>;
  /** Records that a replay was sent up to `next - 1` (finished when past its `to`), with the sink's `change`, in one transaction. */
  advanceReplay(id: number, next: number, at: string, change: Partial<DeliveryState>): Awaitable<void>;
  /**
   * Retention: deletes events older than `before` that are delivered (id ≤ the cursor) and that no
   * retry or replay still needs (inside a pending replay message's range, or at or after an
   * unfinished replay's `next`), or all such when `delivered` is false (no sink); and, when more
   * than `cap` are undelivered, drops the oldest of them (moving the cursor past them). Returns how
   * many were pruned and dropped.
   */
  pruneEvents(
    before: string,
    cap: number,
    delivered: boolean,
    at: string,
  ): Awaitable<{ pruned: number; dropped: number }>;
}

/** One webhook attempt, as the delivery loop asks for it. */
export interface PostOptions {
  url: string;
  body: string;
  /** `webhook-id`, `webhook-timestamp`, `webhook-signature`. */
  headers: Record<string, string>;
  /** Ms (default `POST_TIMEOUT_MS`, 10 s). */
  timeoutMs?: number | undefined;
  /** Plain http beyond loopback (`EVENTS_WEBHOOK_ALLOW_INSECURE`); default false. */
  allowInsecure?: boolean | undefined;
  /** Cuts the attempt off: the daemon is stopping. */
  signal?: AbortSignal | undefined;
}

/** What an attempt came to. */
export type PostResult =
  | { ok: true; status: number }
  | {
      ok: false;
      /** The HTTP status; undefined when no answer came (refused, reset, timed out, aborted). */
      status: number | undefined;
      /** The answer's `Retry-After` header, as sent. */
      retryAfter: string | undefined;
      /** One line for logs and `last_error`: never the URL's path or query (they may hold a token). */
      error: string;
    };

/**
 * POSTs one attempt, following no redirect and retrying nothing (the loop retries the stored
 * message); resolves with the answer's status or the fault, and never rejects.
 */
export type PostWebhook = (options: PostOptions) => Promise<PostResult>;
