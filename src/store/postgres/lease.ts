/**
 * The single-writer rule in Postgres: a session advisory lock held by the writer's connection. The
 * lock and the writes share that connection, so a worker that lost it can write nothing more: the
 * server ends the session, its open transaction and its lock together. A killed worker's socket
 * closes at once; a silent one is found by TCP keepalives within about 11 s (connect.ts).
 * The `leases` row only tells who holds the lock, for the others' logs and /readyz.
 */
import { hostname } from "node:os";
import { POSTGRES } from "../mirror/dialect.js";
import { askPostgres } from "../mirror/execute.js";
import { runSql } from "../runs.js";
import { leaseSql, type Taken, takeWriterLease, WRITER, type WriterLeaseOptions } from "../writer-lease.js";
import type { Session } from "./session.js";

/** The advisory lock's key: any fixed number, the same in every worker of a database. */
const WRITER_LOCK = 7_286_311_452;

const LEASE = leaseSql(POSTGRES);
const RUNS = runSql(POSTGRES);

/** Tries once to become the database's writer on `session`'s connection. */
export function takePostgresLease(session: Session, o: WriterLeaseOptions) {
  return takeWriterLease(
    {
      ttlMs: 15_000,
      take: (holder, now, ttlMs) => take(session, holder, now, ttlMs),
      // The heartbeat shows the holder alive to operators, and finds a lost connection between runs;
      // the lock, not the row, is what keeps the lease.
      renew: (holder, now, ttlMs) =>
        session.besidePages((q) => askPostgres(q, LEASE.renew(WRITER, holder, now, ttlMs))).then(() => true),
      lostBy: () => session.broken !== undefined,
      release: async (holder) => {
        if (session.broken) return;
        await session.besidePages(async (q) => {
          await askPostgres(q, LEASE.release(WRITER, holder));
          await q("SELECT pg_advisory_unlock($1)", [WRITER_LOCK]);
        });
      },
    },
    o,
  );
}

async function take(session: Session, holder: string, now: Date, ttlMs: number): Promise<Taken> {
  const got = await session.besidePages(async (q) => {
    const [row] = await q<{ ok: boolean }>("SELECT pg_try_advisory_lock($1) AS ok", [WRITER_LOCK]);
    return row?.ok === true;
  });
  if (!got) {
    const heldBy = await session.turn((q) => askPostgres(q, LEASE.holderOf(WRITER)));
    return { heldBy: heldBy ?? { holder: "unknown", pid: 0, hostname: "unknown", expiresAt: "" } };
  }
  const us = { holder, pid: process.pid, hostname: hostname() };
  const interrupted = await session.besidePages(async (q) => {
    try {
      await askPostgres(q, LEASE.take(WRITER, us, now, ttlMs));
      return await askPostgres(q, RUNS.markInterruptedRuns(now.toISOString()));
    } catch (err) {
      // Not held half-way: the lock counts each take, and a later release would undo only one.
      await q("SELECT pg_advisory_unlock($1)", [WRITER_LOCK]).catch(() => {});
      throw err;
    }
  });
  return { interrupted };
}
