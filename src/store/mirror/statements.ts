/**
 * Statements written once for both databases, in a dialect's form: their texts built once each, and
 * the writes every page may carry besides its rows (changes, rejects, the stream's progress).
 */
import { createHash } from "node:crypto";
import type { Progress, Reject } from "../../sync/ports.js";
import type { Dialect } from "./dialect.js";
import type { EventRow } from "./events.js";
import type { Change } from "./plan.js";

/** One statement with its `?` placeholders already in the dialect's form. */
export interface Statement {
  sql: string;
  params: unknown[];
}

/** A dialect's statement texts, each built at its first use. */
export class Statements {
  readonly #texts = new Map<string, string>();
  constructor(readonly dialect: Dialect) {}

  /** The text known as `key`, built by `build` with `?` placeholders the first time. */
  text(key: string, build: () => string): string {
    let sql = this.#texts.get(key);
    if (sql === undefined) {
      sql = this.dialect.marks(build());
      this.#texts.set(key, sql);
    }
    return sql;
  }

  /**
   * `rows` inserted by `head` (the statement before VALUES; `tail` follows them), each followed by
   * the values of `suffix`, as many to a statement as the dialect allows; `row` is one row's
   * `(?, …)` when it is not plain values.
   */
  inserts(
    key: string,
    head: string,
    rows: readonly (readonly unknown[])[],
    { tail = "", row, suffix = [] }: { tail?: string; row?: string; suffix?: readonly unknown[] } = {},
  ): Statement[] {
    const width = (rows[0]?.length ?? 0) + suffix.length;
    if (rows.length === 0) return [];
    const per = this.dialect.rowsPerInsert(width, tail.includes("DO UPDATE"));
    const out: Statement[] = [];
    for (let start = 0; start < rows.length; start += per) {
      const end = Math.min(rows.length, start + per);
      const sql = this.text(`${key}:${end - start}`, () => {
        const shape = row ?? `(${Array(width).fill("?").join(", ")})`;
        return `${head} VALUES ${Array(end - start)
          .fill(shape)
          .join(", ")} ${tail}`;
      });
      // Copied by a loop into an array of its final size: this runs for every row a mirror stores.
      const params = new Array<unknown>((end - start) * width);
      let k = 0;
      for (let r = start; r < end; r++) {
        for (const v of rows[r] as readonly unknown[]) params[k++] = v;
        for (const v of suffix) params[k++] = v;
      }
      out.push({ sql, params });
    }
    return out;
  }

  /** Records `changes`, observed by run `runId` (stored as null when no such run is recorded). */
  changes(changes: readonly Change[], runId: number | null): Statement[] {
    const head = "INSERT INTO booking_changes (booking_id, field, old_value, new_value, observed_at, run_id)";
    const row = "(?, ?, ?, ?, ?, (SELECT id FROM sync_runs WHERE id = ?))";
    return this.inserts("changes", head, changes, { row, suffix: [runId] });
  }

  /** Appends `events` to the events stream, seen by run `runId` (as `changes`). */
  events(events: readonly EventRow[], runId: number | null): Statement[] {
    const head = "INSERT INTO booking_events (type, booking_id, at, data, run_id)";
    const row = "(?, ?, ?, ?, (SELECT id FROM sync_runs WHERE id = ?))";
    const out = this.inserts("events", head, events, { row, suffix: [runId] });
    const lock = this.dialect.eventsLock;
    return lock && out.length > 0 ? [{ sql: lock, params: [] }, ...out] : out;
  }

  /** Quarantines rejects; one already stored (same raw JSON) is left as it is. */
  rejects(list: readonly Reject[], endpoint: "feed" | "list", runId: number | null, at: string) {
    const rows = list.map((r) => {
      // `undefined` has no JSON form; storing "null" keeps the row and its reason.
      const rawJson = JSON.stringify(r.raw) ?? "null";
      const sha = createHash("sha256").update(rawJson).digest("hex");
      return [runId, endpoint, r.id, r.createdAt, r.reason, rawJson, sha, at];
    });
    const head = `INSERT INTO rejected_records (run_id, endpoint, booking_id, created_at, reason, raw_json,
      raw_sha256, first_seen_at)`;
    // An unknown run id is stored as null rather than failing the whole page on the foreign key.
    const row = "((SELECT id FROM sync_runs WHERE id = ?), ?, ?, ?, ?, ?, ?, ?)";
    return this.inserts("rejects", head, rows, { tail: "ON CONFLICT (raw_sha256) DO NOTHING", row });
  }

  /** Sets the stream's progress (null clears it) and, when given, its checkpoint (never backwards). */
  progress({ stream, value, checkpoint }: Progress, at: string): Statement {
    const json = value === null || value === undefined ? null : JSON.stringify(value);
    const later = this.dialect.later("sync_state.checkpoint", "excluded.checkpoint");
    const sql = this.text(
      "progress",
      () => `INSERT INTO sync_state (stream, checkpoint, progress_json, updated_at) VALUES (?, ?, ?, ?)
      ON CONFLICT (stream) DO UPDATE SET
        progress_json = excluded.progress_json,
        checkpoint = CASE
          WHEN excluded.checkpoint IS NULL THEN sync_state.checkpoint
          WHEN sync_state.checkpoint IS NULL THEN excluded.checkpoint
          ELSE ${later}
        END,
        updated_at = excluded.updated_at`,
    );
    return { sql, params: [stream, checkpoint ?? null, json, at] };
  }
}
