/**
 * The single-writer rule (invariant 6) in SQLite: a `leases` row with an expiry, taken in an
 * IMMEDIATE transaction, renewed while the writer runs; an expired one may be taken over.
 */
import { hostname as osHostname } from "node:os";
import type Database from "better-sqlite3";
import { SQLITE } from "./mirror/dialect.js";
import { sqliteStatements } from "./mirror/execute.js";
import { runSql } from "./runs.js";
import {
  type LeaseHolder,
  type LeaseKeeper,
  leaseSql,
  type Taken,
  takeWriterLease,
  WRITER,
  type WriterLease,
  type WriterLeaseOptions,
} from "./writer-lease.js";

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

type WithDb = { db: Database.Database };

const LEASE = leaseSql(SQLITE);
const RUNS = runSql(SQLITE);

/** Takes the lease if free, expired or ours, in one IMMEDIATE transaction; else says who holds it. */
export function acquireLease({ db }: WithDb, o: LeaseOptions): LeaseResult {
  const statements = sqliteStatements(db);
  const holder = { holder: o.holder, pid: o.pid ?? process.pid, hostname: o.hostname ?? osHostname() };
  const attempt = db.transaction((): LeaseResult => {
    const current = statements.ask(LEASE.holderOf(o.name));
    if (current && current.holder !== o.holder && current.expiresAt > o.now.toISOString()) {
      return { acquired: false, heldBy: current };
    }
    statements.ask(LEASE.take(o.name, holder, o.now, o.ttlMs));
    const tookOver = current && current.holder !== o.holder ? current : undefined;
    return tookOver ? { acquired: true, tookOverFrom: tookOver } : { acquired: true };
  });
  return attempt.immediate();
}

/** Extends our lease by `ttlMs` from `now`; false when it is no longer ours (stop writing). */
export function renewLease({ db }: WithDb, o: Omit<LeaseOptions, "pid" | "hostname">): boolean {
  return sqliteStatements(db).ask(LEASE.renew(o.name, o.holder, o.now, o.ttlMs));
}

/** Gives the lease up if it is ours; returns whether it was. Another holder's lease is left alone. */
export function releaseLease({ db }: WithDb, o: { name: string; holder: string }): boolean {
  return sqliteStatements(db).ask(LEASE.release(o.name, o.holder));
}

/** Tries once, at once, to become the SQLite file's writer. */
export function takeSqliteLease(store: WithDb, o: WriterLeaseOptions): WriterLease {
  const keeper: LeaseKeeper = {
    ttlMs: 60_000,
    take: (holder, now, ttlMs) => take(store, holder, now, ttlMs),
    renew: (holder, now, ttlMs) => renewLease(store, { name: WRITER, holder, now, ttlMs }),
    // A busy or locked file clears; a lease another holder took is a `false`, not a throw.
    lostBy: () => false,
    release: (holder) => void releaseLease(store, { name: WRITER, holder }),
  };
  return takeWriterLease(keeper, o) as WriterLease;
}

function take(store: WithDb, holder: string, now: Date, ttlMs: number): Taken {
  const options = { name: WRITER, holder, ttlMs, now };
  let result = acquireLease(store, options);
  let tookOver: Extract<Taken, { interrupted: number[] }>["tookOver"];
  if (!result.acquired && holderIsDead(result.heldBy)) {
    // A killed process on this host cannot renew; waiting out its lease would only delay the rerun.
    releaseLease(store, { name: WRITER, holder: result.heldBy.holder });
    tookOver = { from: result.heldBy.holder, because: "dead" };
    result = acquireLease(store, options);
  }
  if (!result.acquired) return { heldBy: result.heldBy };
  if (result.tookOverFrom) tookOver = { from: result.tookOverFrom.holder, because: "expired" };
  const interrupted = sqliteStatements(store.db).ask(RUNS.markInterruptedRuns(now.toISOString()));
  return { tookOver, interrupted };
}

/** True only when certain: same host, and that pid is gone (or is us, as after a container restart). */
function holderIsDead(h: LeaseHolder): boolean {
  if (h.hostname !== osHostname()) return false;
  if (h.pid === process.pid) return true;
  try {
    process.kill(h.pid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "ESRCH";
  }
}
