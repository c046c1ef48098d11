/**
 * In-memory fakes of the core's ports: a feed over an in-memory source, a clock, a logger. The
 * store is always the real one (a SQLite file); these exist so a property test can run thousands
 * of walks quickly.
 */
import type { SummaryBooking } from "../../src/api/schemas.js";
import { ApiError } from "../../src/errors.js";
import { instantOf } from "../../src/sync/feed/window.js";
import type {
  Checked,
  FeedPage,
  FeedQuery,
  ListPage,
  ListQuery,
  Logger,
  PartnerApi,
  TimerClock,
} from "../../src/sync/ports.js";

export interface SourceBooking {
  id: string;
  /** ms since epoch */
  at: number;
}

/**
 * A feed over an in-memory source, newest first, with either cursor rule (limit+1 for hasMore), and
 * its list-bookings: the same bookings by position, in the same order (where the walk reads a tie
 * run, a capping server's cut page among them).
 */
export function fakeFeed(
  source: () => SourceBooking[],
  rule: "exclusive" | "inclusive",
  failAt?: (request: number) => boolean,
): PartnerApi & { requests: number } {
  // As the real client gives up on a network fault: a transient ApiError, the next run tries again.
  const failed = (n: number) => {
    if (failAt?.(n))
      throw Object.assign(new ApiError(`injected failure at request ${n}`, { retryable: true }), {
        injected: true,
      });
  };
  const api = {
    requests: 0,
    async fetchRecent(q: FeedQuery): Promise<FeedPage> {
      failed(api.requests++);
      const c = q.cursor === undefined ? Number.POSITIVE_INFINITY : Date.parse(q.cursor);
      const window = newestFirst(source()).filter((b) => (rule === "exclusive" ? b.at < c : b.at <= c));
      const page = window.slice(0, q.limit);
      return {
        records: page.map(checked),
        hasMore: window.length > q.limit,
        attempts: 1,
      };
    },
    async listBookings(q: ListQuery): Promise<ListPage> {
      failed(api.requests++);
      const all = newestFirst(source());
      const from = (q.page - 1) * q.pageSize;
      return {
        records: all.slice(from, from + q.pageSize).map(checked) as unknown as ListPage["records"],
        page: q.page,
        pageSize: q.pageSize,
        total: all.length,
        totalPages: Math.ceil(all.length / q.pageSize),
        attempts: 1,
      };
    },
  };
  return api;
}

function newestFirst(source: SourceBooking[]): SourceBooking[] {
  return [...source].sort((a, b) => b.at - a.at || (a.id < b.id ? 1 : -1));
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
    problems: [],
  };
}

/** A clock that moves only when told; its timers run as time passes, due first, then in order set. */
export interface TestClock extends TimerClock {
  /** Moves to `ms` (since epoch), running the timers due by then; moving back runs none. */
  set(ms: number): void;
  /** Moves `ms` forward: `set(now + ms)`. */
  advance(ms: number): void;
  /** Timers set and not yet run or cleared. */
  pending(): number;
}

export function fixedClock(start: number): TestClock {
  let now = start;
  let order = 0;
  const timers = new Map<number, { at: number; fn: () => void }>();
  const set = (to: number) => {
    for (;;) {
      let next: [number, { at: number; fn: () => void }] | undefined;
      for (const entry of timers) if (entry[1].at <= to && (!next || entry[1].at < next[1].at)) next = entry;
      if (!next) break;
      timers.delete(next[0]);
      now = Math.max(now, next[1].at);
      next[1].fn();
    }
    now = to;
  };
  return {
    now: () => new Date(now),
    setTimeout(fn, ms) {
      const id = order++;
      timers.set(id, { at: now + Math.max(0, ms), fn });
      return () => void timers.delete(id);
    },
    set,
    advance: (ms) => set(now + ms),
    pending: () => timers.size,
  };
}

/** A logger that keeps what it was told, so tests can assert on warnings. */
export function memoryLogger(): Logger & {
  lines: Array<{ level: string; msg?: string | undefined; obj: object }>;
} {
  const lines: Array<{ level: string; msg?: string | undefined; obj: object }> = [];
  const at = (level: string) => (obj: object, msg?: string) => void lines.push({ level, msg, obj });
  return { lines, debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error") };
}
