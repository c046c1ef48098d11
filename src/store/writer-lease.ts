/** The single-writer rule for whole commands: take, renew and release the `writer` lease. */
import { hostname } from "node:os";
import type { Awaitable, Clock, Logger } from "../sync/ports.js";
import { acquireLease, type LeaseHolder, releaseLease, renewLease } from "./lease.js";
import { markInterruptedRuns } from "./runs.js";

const NAME = "writer";

export interface WriterLeaseOptions {
  clock: Clock;
  logger: Logger;
  /** Lease lifetime without renewal, ms; renewed every third of it. Default 60_000. */
  ttlMs?: number;
  /** Called if a renewal finds the lease lost (this process stalled past its expiry). */
  onLost?: () => void;
}

export type WriterLease =
  | { acquired: true; holder: string; release(): Awaitable<void> }
  | { acquired: false; heldBy: LeaseHolder; message: string };

/** Tries once to become the database's writer. */
export function takeWriterLease(
  store: Parameters<typeof acquireLease>[0],
  o: WriterLeaseOptions,
): WriterLease {
  const ttlMs = o.ttlMs ?? 60_000;
  const holder = `${hostname()}:${process.pid}:${Math.random().toString(36).slice(2, 8)}`;
  let result = acquireLease(store, { name: NAME, holder, ttlMs, now: o.clock.now() });
  if (!result.acquired && holderIsDead(result.heldBy)) {
    // A killed process on this host cannot renew; waiting out its lease would only delay the rerun.
    releaseLease(store, { name: NAME, holder: result.heldBy.holder });
    o.logger.warn(
      { previous: result.heldBy.holder },
      "took over the writer lease of a process that no longer runs",
    );
    result = acquireLease(store, { name: NAME, holder, ttlMs, now: o.clock.now() });
  }
  if (!result.acquired) {
    const h = result.heldBy;
    const message =
      `another booking-sync is writing to this database (pid ${h.pid} on ${h.hostname}, lease until ${h.expiresAt}); ` +
      "only one writer may run at a time";
    return { acquired: false, heldBy: h, message };
  }
  if (result.tookOverFrom) {
    o.logger.warn(
      { previous: result.tookOverFrom.holder },
      "took over the writer lease left by a stopped process",
    );
  }
  const interrupted = markInterruptedRuns(store.db, o.clock.now().toISOString());
  if (interrupted.length > 0) {
    o.logger.warn(
      { runIds: interrupted },
      `marked ${interrupted.length} run(s) a stopped process left running as interrupted in sync_runs`,
    );
  }
  // A renewal made while pages are batched joins their open transaction and commits with them
  // (batch.ts), at most a second later: well inside the lease.
  const timer = setInterval(() => {
    let renewed: boolean;
    try {
      renewed = renewLease(store, { name: NAME, holder, ttlMs, now: o.clock.now() });
    } catch (err) {
      // A busy or briefly unavailable database: the next tick tries again, well before expiry.
      o.logger.warn({ err }, "could not renew the writer lease; retrying");
      return;
    }
    if (!renewed) {
      o.logger.error({ holder }, "lost the writer lease; stopping");
      clearInterval(timer);
      o.onLost?.();
    }
  }, ttlMs / 3);
  timer.unref();
  return {
    acquired: true,
    holder,
    release() {
      clearInterval(timer);
      releaseLease(store, { name: NAME, holder });
    },
  };
}

/** True only when certain: same host, and that pid is gone (or is us, as after a container restart). */
function holderIsDead(h: LeaseHolder): boolean {
  if (h.hostname !== hostname()) return false;
  if (h.pid === process.pid) return true;
  try {
    process.kill(h.pid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "ESRCH";
  }
}
