/**
 * The single-writer rule in Postgres: a session advisory lock held by the writer's connection. The
 * lock and the writes share that connection, so a worker that lost it can write nothing more: the
 * server ends the session, its open transaction and its lock together. A killed worker's socket
 * closes at once; a silent one is found by TCP keepalives within about 11 s (connect.ts).
 * The `leases` row only tells who holds the lock, for the others' logs and /readyz.
 */
import { hostname } from "node:os";
import type { LeaseHolder } from "../lease.js";
import type { WriterLease, WriterLeaseOptions } from "../writer-lease.js";
import { markInterruptedRuns } from "./runs.js";
import type { Session } from "./session.js";
import type { Query } from "./sql.js";

/** The advisory lock's key: any fixed number, the same in every worker of a database. */
const WRITER_LOCK = 7_286_311_452;
const NAME = "writer";

/** Tries once to become the database's writer on `session`'s connection. */
export async function takePostgresLease(session: Session, o: WriterLeaseOptions): Promise<WriterLease> {
  const ttlMs = o.ttlMs ?? 15_000;
  const holder = `${hostname()}:${process.pid}:${Math.random().toString(36).slice(2, 8)}`;
  const got = await session.besidePages(async (query) => {
    const [row] = await query<{ ok: boolean }>("SELECT pg_try_advisory_lock($1) AS ok", [WRITER_LOCK]);
    return row?.ok === true;
  });
  if (!got) {
    const heldBy = await session.turn((query) => holderOf(query));
    const who = heldBy
      ? `pid ${heldBy.pid} on ${heldBy.hostname}`
      : "a worker that has not said who it is yet";
    const message = `another booking-sync is writing to this database (${who}); only one writer may run at a time`;
    return { acquired: false, heldBy: heldBy ?? unknownHolder(), message };
  }
  const now = o.clock.now();
  const interrupted = await session.besidePages(async (query) => {
    try {
      await announce(query, holder, now, ttlMs);
      return await markInterruptedRuns(query, now.toISOString());
    } catch (err) {
      // Not held half-way: the lock counts each take, and a later release would undo only one.
      await query("SELECT pg_advisory_unlock($1)", [WRITER_LOCK]).catch(() => {});
      throw err;
    }
  });
  if (interrupted.length > 0)
    o.logger.warn(
      { runIds: interrupted },
      `marked ${interrupted.length} run(s) a stopped worker left running as interrupted in sync_runs`,
    );
  // The heartbeat shows the holder alive to operators, and finds a lost connection between runs.
  const timer = setInterval(() => {
    const at = o.clock.now();
    session
      .besidePages((query) =>
        query("UPDATE leases SET heartbeat_at = $1, expires_at = $2 WHERE name = $3 AND holder = $4", [
          at.toISOString(),
          later(at, ttlMs),
          NAME,
          holder,
        ]),
      )
      .catch((err) => {
        if (!session.broken) return o.logger.warn({ err }, "could not record the writer heartbeat");
        clearInterval(timer);
        o.logger.error({ holder }, "lost the connection that holds the writer lock; stopping");
        o.onLost?.();
      });
  }, ttlMs / 3);
  timer.unref();
  return {
    acquired: true,
    holder,
    async release() {
      clearInterval(timer);
      if (session.broken) return;
      await session.besidePages(async (query) => {
        await query("DELETE FROM leases WHERE name = $1 AND holder = $2", [NAME, holder]);
        await query("SELECT pg_advisory_unlock($1)", [WRITER_LOCK]);
      });
    },
  };
}

/** Says who holds the lock, for the others' logs and /readyz. */
async function announce(query: Query, holder: string, now: Date, ttlMs: number): Promise<void> {
  await query(
    `INSERT INTO leases (name, holder, pid, hostname, acquired_at, heartbeat_at, expires_at)
    VALUES ($1, $2, $3, $4, $5, $5, $6)
    ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, pid = excluded.pid,
      hostname = excluded.hostname, acquired_at = excluded.acquired_at,
      heartbeat_at = excluded.heartbeat_at, expires_at = excluded.expires_at`,
    [NAME, holder, process.pid, hostname(), now.toISOString(), later(now, ttlMs)],
  );
}

async function holderOf(
  query: Parameters<Parameters<Session["turn"]>[0]>[0],
): Promise<LeaseHolder | undefined> {
  const [row] = await query<LeaseHolder>(
    `SELECT holder, pid, hostname, expires_at AS "expiresAt" FROM leases WHERE name = $1`,
    [NAME],
  );
  return row;
}

function unknownHolder(): LeaseHolder {
  return { holder: "unknown", pid: 0, hostname: "unknown", expiresAt: "" };
}

const later = (at: Date, ms: number) => new Date(at.getTime() + ms).toISOString();
