/**
 * The single-writer rule for whole commands, for both databases: take the `writer` lease once, keep
 * it while the command runs, give it up at the end. How a database holds it is its own (lease.ts:
 * a row with an expiry; postgres/lease.ts: an advisory lock); the `leases` row's statements are here.
 */
import { hostname } from "node:os";
import type { Awaitable, Clock, Logger } from "../sync/ports.js";
import { type Ask, asking } from "./mirror/ask.js";
import type { Dialect } from "./mirror/dialect.js";

/** The lease every writer takes. */
export const WRITER = "writer";

/** Who holds a lease, as a refusal reports it. */
export interface LeaseHolder {
  /** `host:pid:random` of the holder. */
  holder: string;
  pid: number;
  hostname: string;
  /** When the lease lapses unless renewed (ISO). */
  expiresAt: string;
}

export interface WriterLeaseOptions {
  clock: Clock;
  logger: Logger;
  /** Lease lifetime without renewal, ms; renewed every third of it. Default the database's (`LeaseKeeper.ttlMs`). */
  ttlMs?: number;
  /** Called if a renewal finds the lease lost (this process stalled past its expiry, or lost its connection). */
  onLost?: () => void;
}

export type WriterLease =
  | { acquired: true; holder: string; release(): Awaitable<void> }
  | { acquired: false; heldBy: LeaseHolder; message: string };

/** What a take found: who holds the lease instead, or that it is ours and what a stopped writer left. */
export type Taken =
  | { heldBy: LeaseHolder }
  | { heldBy?: undefined; tookOver?: { from: string; because: "expired" | "dead" }; interrupted: number[] };

/** How one database holds the writer lease. */
export interface LeaseKeeper {
  /** Lifetime without renewal when the options give none, ms. */
  ttlMs: number;
  /** Tries once to take the lease for `holder`; when taken, marks the runs a stopped writer left. */
  take(holder: string, now: Date, ttlMs: number): Awaitable<Taken>;
  /** Extends the lease; false when it is no longer ours. Throws when it cannot tell. */
  renew(holder: string, now: Date, ttlMs: number): Awaitable<boolean>;
  /** Whether a renewal that threw means the lease is lost; otherwise the next renewal tries again. */
  lostBy(err: unknown): boolean;
  /** Gives the lease up. */
  release(holder: string): Awaitable<void>;
}

/** Tries once to become the database's writer through `keeper`: at once when it answers at once. */
export function takeWriterLease(keeper: LeaseKeeper, o: WriterLeaseOptions): Awaitable<WriterLease> {
  const ttlMs = o.ttlMs ?? keeper.ttlMs;
  const holder = `${hostname()}:${process.pid}:${Math.random().toString(36).slice(2, 8)}`;
  return then(keeper.take(holder, o.clock.now(), ttlMs), (taken): WriterLease => {
    if (taken.heldBy) {
      const h = taken.heldBy;
      const who = h.pid
        ? `pid ${h.pid} on ${h.hostname}, lease until ${h.expiresAt}`
        : "a writer that has not said who it is yet";
      const message = `another booking-sync is writing to this database (${who}); only one writer may run at a time`;
      return { acquired: false, heldBy: h, message };
    }
    if (taken.tookOver) {
      const { from, because } = taken.tookOver;
      const why = because === "dead" ? "of a process that no longer runs" : "left by a stopped process";
      o.logger.warn({ previous: from }, `took over the writer lease ${why}`);
    }
    const n = taken.interrupted.length;
    if (n > 0) {
      const message = `marked ${n} run(s) a stopped process left running as interrupted in sync_runs`;
      o.logger.warn({ runIds: taken.interrupted }, message);
    }
    const lost = () => {
      clearInterval(timer);
      o.logger.error({ holder }, "lost the writer lease; stopping");
      o.onLost?.();
    };
    const failed = (err: unknown) => {
      if (keeper.lostBy(err)) return lost();
      // A busy or briefly unavailable database: the next tick tries again, well before expiry.
      o.logger.warn({ err }, "could not renew the writer lease; retrying");
    };
    const timer = setInterval(() => {
      try {
        const renewed = then(keeper.renew(holder, o.clock.now(), ttlMs), (ok) => ok || lost());
        if (renewed instanceof Promise) renewed.catch(failed);
      } catch (err) {
        failed(err);
      }
    }, ttlMs / 3);
    timer.unref();
    return {
      acquired: true,
      holder,
      release() {
        clearInterval(timer);
        return keeper.release(holder);
      },
    };
  });
}

/** `f` of `value`: at once when `value` is there, once it settles when it is a promise. */
function then<T, R>(value: Awaitable<T>, f: (v: T) => R): Awaitable<R> {
  return value instanceof Promise ? value.then(f) : f(value as T);
}

const later = (at: Date, ms: number) => new Date(at.getTime() + ms).toISOString();

/** The `leases` row's statements in dialect `d`: who holds a lease, and taking, renewing, releasing it. */
export function leaseSql(d: Dialect) {
  const holderOf = d.marks(
    `SELECT holder, pid, hostname, expires_at AS "expiresAt" FROM leases WHERE name = ?`,
  );
  // Re-acquiring our own lease keeps its acquired_at; any other acquisition starts afresh.
  const take =
    d.marks(`INSERT INTO leases (name, holder, pid, hostname, acquired_at, heartbeat_at, expires_at)
    VALUES (?, ?, ?, ?, ?, ?, ?)
    ON CONFLICT (name) DO UPDATE SET
      acquired_at = CASE WHEN leases.holder = excluded.holder THEN leases.acquired_at ELSE excluded.acquired_at END,
      holder = excluded.holder, pid = excluded.pid, hostname = excluded.hostname,
      heartbeat_at = excluded.heartbeat_at, expires_at = excluded.expires_at
    RETURNING name`);
  const renew = d.marks(
    "UPDATE leases SET heartbeat_at = ?, expires_at = ? WHERE name = ? AND holder = ? RETURNING name",
  );
  const release = d.marks("DELETE FROM leases WHERE name = ? AND holder = ? RETURNING name");
  const one = (rows: unknown[]) => rows.length === 1;
  return {
    holderOf: (name: string) => asking(holderOf, [name], ([row]) => row as LeaseHolder | undefined),
    /** Takes `name` for `holder` whoever held it: the caller has decided it may. */
    take: (name: string, holder: Omit<LeaseHolder, "expiresAt">, now: Date, ttlMs: number): Ask<void> => {
      const at = now.toISOString();
      const params = [name, holder.holder, holder.pid, holder.hostname, at, at, later(now, ttlMs)];
      return asking(take, params, () => undefined);
    },
    /** Extends `holder`'s lease by `ttlMs` from `now`; false when it is not theirs. */
    renew: (name: string, holder: string, now: Date, ttlMs: number) =>
      asking(renew, [now.toISOString(), later(now, ttlMs), name, holder], one),
    /** Gives `holder`'s lease up; false when it was not theirs. */
    release: (name: string, holder: string) => asking(release, [name, holder], one),
  };
}
