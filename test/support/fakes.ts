/**
 * In-memory fakes of the core's ports, for the pure walk only. The real adapters are tested for
 * real (SQLite files, HTTP); these exist so a property test can run thousands of walks quickly.
 */
import type { SummaryBooking } from "../../src/api/schemas.js";
import type {
  Checked,
  Clock,
  FeedBatch,
  FeedPage,
  FeedQuery,
  Logger,
  PartnerApi,
  RunFinish,
  RunStart,
  StreamState,
  SyncStore,
  UpsertCounts,
} from "../../src/sync/ports.js";
import { instantOf } from "../../src/sync/window.js";

export interface SourceBooking {
  id: string;
  /** ms since epoch */
  at: number;
}

/** A feed over an in-memory source, newest first, with either cursor rule (limit+1 for hasMore). */
export function fakeFeed(
  source: () => SourceBooking[],
  rule: "exclusive" | "inclusive",
  failAt?: (request: number) => boolean,
): PartnerApi & { requests: number } {
  const api = {
    requests: 0,
    async fetchRecent(q: FeedQuery): Promise<FeedPage> {
      const n = api.requests++;
      if (failAt?.(n)) throw Object.assign(new Error(`injected failure at request ${n}`), { injected: true });
      const c = q.cursor === undefined ? Number.POSITIVE_INFINITY : Date.parse(q.cursor);
      const window = source()
        .filter((b) => (rule === "exclusive" ? b.at < c : b.at <= c))
        .sort((a, b) => b.at - a.at || (a.id < b.id ? 1 : -1));
      const page = window.slice(0, q.limit);
      return {
        records: page.map(checked),
        hasMore: window.length > q.limit,
        attempts: 1,
      };
    },
    async listBookings(): Promise<never> {
      throw new Error("not used by the walk");
    },
  };
  return api;
}

function checked(b: SourceBooking): Checked<SummaryBooking> {
  const createdAt = new Date(b.at).toISOString();
  const raw = { _id: b.id, createdAt };
  return {
    ok: true,
    id: b.id,
    createdAt,
    at: instantOf(createdAt),
    record: raw as unknown as SummaryBooking,
    raw,
  };
}

/** A store whose commits are atomic; `killAfter` commits, every later commit throws (a dead process). */
export function fakeStore(killAfter = Number.POSITIVE_INFINITY): SyncStore & {
  rows: Map<string, string>;
  streams: Map<string, StreamState>;
  revive(): void;
} {
  let commits = 0;
  let dead = false;
  const rows = new Map<string, string>();
  const streams = new Map<string, StreamState>();
  return {
    rows,
    streams,
    revive() {
      dead = false;
      commits = 0;
      killAfter = Number.POSITIVE_INFINITY;
    },
    readStream: (stream) => structuredClone(streams.get(stream) ?? { stream, checkpoint: null, walk: null }),
    commitFeedBatch(batch: FeedBatch): UpsertCounts {
      if (dead || commits++ >= killAfter) {
        dead = true;
        throw new Error("process killed");
      }
      const counts = { inserted: 0, updated: 0, unchanged: 0, rejected: batch.rejects.length };
      for (const b of batch.bookings) {
        const json = JSON.stringify(b.raw);
        const had = rows.get(b.id);
        if (had === undefined) counts.inserted++;
        else if (had !== json) counts.updated++;
        else counts.unchanged++;
        rows.set(b.id, json);
      }
      const prev = streams.get(batch.stream)?.checkpoint ?? null;
      const next = batch.checkpoint && (!prev || batch.checkpoint > prev) ? batch.checkpoint : prev;
      streams.set(batch.stream, {
        stream: batch.stream,
        checkpoint: next,
        walk: structuredClone(batch.walk),
      });
      return counts;
    },
    startRun: (_run: RunStart) => 1,
    finishRun: (_id: number, _result: RunFinish) => {},
  };
}

export function fixedClock(start: number): Clock & { set(ms: number): void } {
  let now = start;
  return { now: () => new Date(now), set: (ms) => (now = ms) };
}

/** A logger that keeps what it was told, so tests can assert on warnings. */
export function memoryLogger(): Logger & {
  lines: Array<{ level: string; msg?: string | undefined; obj: object }>;
} {
  const lines: Array<{ level: string; msg?: string | undefined; obj: object }> = [];
  const at = (level: string) => (obj: object, msg?: string) => void lines.push({ level, msg, obj });
  return { lines, debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error") };
}
