/** Named leases for the single-writer rule (invariant 6); an expired one may be taken over. */
import { hostname as osHostname } from "node:os";
import type Database from "better-sqlite3";

/** Who holds a lease, as a refusal reports it. */
export interface LeaseHolder {
  /** `host:pid:random` of the holder. */
  holder: string;
  pid: number;
  hostname: string;
  /** When the lease lapses unless renewed (ISO). */
  expiresAt: string;
}

export type LeaseResult =
  | {
      acquired: true;
      /** The expired lease this acquisition replaced, if another holder had left one behind. */
      tookOverFrom?: LeaseHolder | undefined;
    }
  | { acquired: false; heldBy: LeaseHolder };

export interface LeaseOptions {
  /** Lease name, e.g. `writer`. */
  name: string;
  /** This process's identity, `host:pid:random`; the same value renews and releases. */
  holder: string;
  /** How long the lease lasts without a renewal, ms. Renew well within it (e.g. every ttl/3). */
  ttlMs: number;
  /** The current time; a parameter so tests set it instead of sleeping. */
  now: Date;
  /** Recorded for operators; default `process.pid`. */
  pid?: number | undefined;
  /** Recorded for operators; default `os.hostname()`. */
  hostname?: string | undefined;
}

interface LeaseRow {
  holder: string;
  pid: number;
  hostname: string;
  expiresAt: string;
}

type WithDb = { db: Database.Database };

/** Takes the lease if free, expired or ours, in one IMMEDIATE transaction; else says who holds it. */
export function acquireLease(store: WithDb, options: LeaseOptions): LeaseResult {
  const { db } = store;
  const now = options.now.toISOString();
  const expiresAt = new Date(options.now.getTime() + options.ttlMs).toISOString();
  const select = db.prepare<[string], LeaseRow>(
    "SELECT holder, pid, hostname, expires_at AS expiresAt FROM leases WHERE name = ?",
  );
  // Re-acquiring our own lease keeps its acquired_at; any other acquisition starts afresh.
  const upsert = db.prepare(`
    INSERT INTO leases (name, holder, pid, hostname, acquired_at, heartbeat_at, expires_at)
    VALUES (@name, @holder, @pid, @hostname, @now, @now, @expiresAt)
    ON CONFLICT (name) DO UPDATE SET
      acquired_at = CASE WHEN leases.holder = excluded.holder THEN leases.acquired_at ELSE excluded.acquired_at END,
      holder = excluded.holder, pid = excluded.pid, hostname = excluded.hostname,
      heartbeat_at = excluded.heartbeat_at, expires_at = excluded.expires_at`);
  const attempt = db.transaction((): LeaseResult => {
    const current = select.get(options.name);
    if (current && current.holder !== options.holder && current.expiresAt > now) {
      return { acquired: false, heldBy: current };
    }
    upsert.run({
      name: options.name,
      holder: options.holder,
      pid: options.pid ?? process.pid,
      hostname: options.hostname ?? osHostname(),
      now,
      expiresAt,
    });
    const tookOver = current && current.holder !== options.holder ? current : undefined;
    return tookOver ? { acquired: true, tookOverFrom: tookOver } : { acquired: true };
  });
  return attempt.immediate();
}

/** Extends our lease by `ttlMs` from `now`; false when it is no longer ours (stop writing). */
export function renewLease(store: WithDb, options: Omit<LeaseOptions, "pid" | "hostname">): boolean {
  const now = options.now.toISOString();
  const expiresAt = new Date(options.now.getTime() + options.ttlMs).toISOString();
  const renew = store.db.prepare(
    "UPDATE leases SET heartbeat_at = ?, expires_at = ? WHERE name = ? AND holder = ?",
  );
  return renew.run(now, expiresAt, options.name, options.holder).changes === 1;
}

/** Gives the lease up if it is ours; returns whether it was. Another holder's lease is left alone. */
export function releaseLease(store: WithDb, options: { name: string; holder: string }): boolean {
  const release = store.db.prepare("DELETE FROM leases WHERE name = ? AND holder = ?");
  return release.run(options.name, options.holder).changes === 1;
}
