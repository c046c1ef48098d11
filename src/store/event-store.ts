/**
 * The events stream's side of the mirror (`EventStore`), written once for both databases. Reads go
 * through a read snapshot, so a consumer never sees an event whose page has not committed (on the
 * writer's own connection it would, and a page lost after would leave the consumer past an id the
 * database hands out again). Writes go through the writer's connection outside any batch and are
 * committed when they resolve: the pending message must be stored before its first attempt.
 */
import type {
  DeliveryState,
  EventStore,
  PendingMessage,
  Replay,
  SavedDelivery,
  StoredEvent,
} from "../events/ports.js";
import type { Awaitable } from "../sync/ports.js";
import { readBounds } from "./event-bounds.js";
import { type Dialect, POSTGRES } from "./mirror/dialect.js";
import type { Snapshot } from "./snapshot.js";

/** Runs one statement (`?` placeholders, in the writer's dialect) and commits it; its rows. */
export type WriteRows = (sql: string, params: unknown[]) => Awaitable<Array<Record<string, unknown>>>;

/** The one sink there is today: `event_delivery.name` of its row. */
export const SINK = "webhook";
/** Rows one prune statement deletes at most: a first prune after weeks stays a series of small writes. */
const PRUNE_CHUNK = 10_000;

/** The sink's state before its first write. */
export const INITIAL_DELIVERY: DeliveryState = {
  endpoint: null,
  cursor: 0,
  pending: null,
  attempts: 0,
  nextAttemptAt: null,
  lastError: null,
  lastErrorAt: null,
  lastDeliveredAt: null,
  dropped: 0,
  droppedAt: null,
};

/** `DeliveryState`'s keys and their columns; `pending` is four columns. */
const COLUMNS: Record<Exclude<keyof DeliveryState, "pending">, string> = {
  endpoint: "endpoint",
  cursor: "cursor",
  attempts: "attempts",
  nextAttemptAt: "next_attempt_at",
  lastError: "last_error",
  lastErrorAt: "last_error_at",
  lastDeliveredAt: "last_delivered_at",
  dropped: "dropped",
  droppedAt: "dropped_at",
};
const MESSAGE = ["message_id", "message_first", "message_last", "message_replay"];

/**
 * One column's update on conflict. The cursor only moves forward: retention (after a run) and the
 * delivery loop both move it, and neither may take back what the other moved.
 */
const assign = (c: string) =>
  c === "cursor"
    ? "cursor = CASE WHEN excluded.cursor > event_delivery.cursor THEN excluded.cursor ELSE event_delivery.cursor END"
    : `${c} = excluded.${c}`;

/** The columns and values a change of the sink's state writes. */
function assignments(change: Partial<DeliveryState>): Array<[string, unknown]> {
  const out: Array<[string, unknown]> = [];
  for (const [key, value] of Object.entries(change)) {
    if (key === "pending") {
      const p = value as PendingMessage | null;
      const values = p ? [p.id, p.first, p.last, p.replay] : [null, null, null, null];
      for (const [i, column] of MESSAGE.entries()) out.push([column, values[i]]);
    } else if (key in COLUMNS) out.push([COLUMNS[key as keyof typeof COLUMNS], value]);
  }
  return out;
}

/** The sink's state from its `event_delivery` row (the initial state when there is none). */
export function stateOf(row: Record<string, unknown> | undefined): DeliveryState {
  if (!row) return { ...INITIAL_DELIVERY };
  const n = (v: unknown) => (v === null || v === undefined ? null : Number(v));
  const s = (v: unknown) => (v === null || v === undefined ? null : String(v));
  return {
    endpoint: s(row.endpoint),
    cursor: Number(row.cursor),
    pending:
      row.message_id === null
        ? null
        : {
            id: String(row.message_id),
            first: Number(row.message_first),
            last: Number(row.message_last),
            replay: n(row.message_replay),
          },
    attempts: Number(row.attempts),
    nextAttemptAt: s(row.next_attempt_at),
    lastError: s(row.last_error),
    lastErrorAt: s(row.last_error_at),
    lastDeliveredAt: s(row.last_delivered_at),
    dropped: Number(row.dropped),
    droppedAt: s(row.dropped_at),
  };
}

/** The mirror's `EventStore`: reads in `snapshot`, writes through `write` in dialect `d`. */
export function eventStore(snapshot: Snapshot, write: WriteRows, d: Dialect): EventStore {
  const read = <R>(sql: string, params: unknown[] = []) =>
    snapshot((r) => r.all<R>(POSTGRES.marks(sql), params));
  const put = (sql: string, params: unknown[]) => write(d.marks(sql), params);
  /** The oldest or newest event's id, 0 when none. */
  const edgeId = async (edge: "min" | "max") =>
    Number(
      (await read<{ id: unknown }>(`SELECT coalesce(${edge}(id), 0) AS id FROM booking_events`))[0]?.id ?? 0,
    );
  const cursorOf = `coalesce((SELECT cursor FROM event_delivery WHERE name = '${SINK}'), 0)`;

  const readRow = async () =>
    (await read<Record<string, unknown>>("SELECT * FROM event_delivery WHERE name = ?", [SINK]))[0];
  const readDelivery = async () => stateOf(await readRow());
  // The state after the write, and whether a replay waits, come back with it: the delivery loop
  // reads them in no second round trip.
  const saveDelivery = async (change: Partial<DeliveryState>): Promise<SavedDelivery> => {
    const set = assignments(change);
    const waiting = "EXISTS (SELECT 1 FROM event_replays WHERE finished_at IS NULL) AS waiting";
    const saved = (row: Record<string, unknown> | undefined, waits: unknown) => ({
      ...stateOf(row),
      replayWaiting: Boolean(Number(waits ?? 0)),
    });
    if (set.length === 0) {
      const [replays] = await read<{ waiting: unknown }>(`SELECT ${waiting}`);
      return saved(await readRow(), replays?.waiting);
    }
    const names = set.map(([c]) => c);
    const [row] = await put(
      `INSERT INTO event_delivery (name, ${names.join(", ")}) VALUES (?, ${names.map(() => "?").join(", ")})
       ON CONFLICT (name) DO UPDATE SET ${names.map(assign).join(", ")}
       RETURNING *, ${waiting}`,
      [SINK, ...set.map(([, v]) => v)],
    );
    return saved(row, row?.waiting);
  };

  /** Deletes, a chunk at a time, the events `where` selects; how many. */
  const deleteWhere = async (where: string, params: unknown[]) => {
    let total = 0;
    for (;;) {
      const rows = await put(
        `DELETE FROM booking_events WHERE id IN
          (SELECT id FROM booking_events WHERE ${where} ORDER BY id LIMIT ${PRUNE_CHUNK}) RETURNING id`,
        params,
      );
      total += rows.length;
      if (rows.length < PRUNE_CHUNK) return total;
    }
  };

  return {
    readEvents: (after, limit, to) =>
      read<Record<string, string>>(
        `SELECT id, type, booking_id, at, data FROM booking_events
          WHERE id > ? AND (CAST(? AS bigint) IS NULL OR id <= ?)
          ORDER BY id LIMIT CAST(? AS integer)`,
        [after, to ?? null, to ?? null, limit],
      ).then((rows) =>
        rows.map(
          (r): StoredEvent => ({
            id: Number(r.id),
            type: String(r.type),
            bookingId: String(r.booking_id),
            at: String(r.at),
            data: String(r.data),
          }),
        ),
      ),
    firstEventId: () => edgeId("min"),
    bounds: () => snapshot((r) => readBounds(r, d === POSTGRES)),
    lastEventId: () => edgeId("max"),
    readDelivery,
    saveDelivery,
    nextReplay: async () => {
      const [row] = await read<Record<string, unknown>>(
        "SELECT id, from_id, to_id, next_id FROM event_replays WHERE finished_at IS NULL ORDER BY id LIMIT 1",
      );
      if (!row) return null;
      const replay: Replay = {
        id: Number(row.id),
        from: Number(row.from_id),
        to: Number(row.to_id),
        next: Number(row.next_id),
      };
      return replay;
    },
    requestReplay: async (from, to, at) => {
      const [row] = await put(
        "INSERT INTO event_replays (from_id, to_id, next_id, requested_at) VALUES (?, ?, ?, ?) RETURNING id",
        [from, to, from, at],
      );
      return Number(row?.id);
    },
    // The replay first, then the sink: killed between them, the stored message is sent again under
    // its own id and this repeats, moving nothing further.
    advanceReplay: async (id, next, at, change) => {
      await put(
        `UPDATE event_replays SET next_id = ?,
          finished_at = CASE WHEN CAST(? AS bigint) > to_id THEN ? ELSE finished_at END
         WHERE id = ? RETURNING id`,
        [next, next, at, id],
      );
      await saveDelivery(change);
    },
    pruneEvents: async (before, cap, delivered, at) => {
      let dropped = 0;
      if (delivered) {
        // Past the cap, the oldest undelivered go: the cursor moves past them, counted and dated.
        const [state] = await read<{ cursor: unknown }>(`SELECT ${cursorOf} AS cursor`);
        const cursor = Number(state?.cursor ?? 0);
        const [cut] = await read<{ id: unknown }>(
          "SELECT id FROM booking_events WHERE id > ? ORDER BY id DESC LIMIT 1 OFFSET CAST(? AS integer)",
          [cursor, cap],
        );
        if (cut) {
          const range = "id > ? AND id <= ?";
          const [count] = await read<{ n: number }>(
            `SELECT count(*) AS n FROM booking_events WHERE ${range}`,
            [cursor, cut.id],
          );
          // Only if the delivery loop has not moved the cursor since it was read: else what was
          // counted may be delivered by now, and the next run judges again.
          const moved = await put(
            `INSERT INTO event_delivery (name, cursor, dropped, dropped_at) VALUES (?, ?, ?, ?)
             ON CONFLICT (name) DO UPDATE SET ${assign("cursor")},
               dropped = event_delivery.dropped + excluded.dropped, dropped_at = excluded.dropped_at
             WHERE event_delivery.cursor = ?
             RETURNING name`,
            [SINK, Number(cut.id), Number(count?.n ?? 0), at, cursor],
          );
          if (moved.length > 0) {
            dropped = Number(count?.n ?? 0);
            await deleteWhere(range, [cursor, Number(cut.id)]);
          }
        }
      }
      // Never a pending replay message's events, nor what an unfinished replay has still to send: a
      // retry rebuilds its body from them (a live one's are after the cursor). Read by the statement
      // that deletes, so a message stored before it holds.
      const kept = `NOT EXISTS (SELECT 1 FROM event_delivery s WHERE s.name = '${SINK}'
          AND s.message_replay IS NOT NULL AND booking_events.id BETWEEN s.message_first AND s.message_last)
        AND NOT EXISTS (SELECT 1 FROM event_replays r
          WHERE r.finished_at IS NULL AND booking_events.id BETWEEN r.next_id AND r.to_id)`;
      const pruned = await deleteWhere(delivered ? `at < ? AND id <= ${cursorOf} AND ${kept}` : "at < ?", [
        before,
      ]);
      return { pruned, dropped };
    },
  };
}
