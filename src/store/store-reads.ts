/**
 * What both stores answer the same way: the reads of the mirror, of reconcile and of `sync_runs`,
 * each a statement written once (reads.ts, runs.ts, mirror/unlisted.ts) that a store only executes.
 */
import type { Awaitable } from "../sync/ports.js";
import { readStatusPage } from "./daily.js";
import { readEventsStatus } from "./events-status.js";
import type { Ask } from "./mirror/ask.js";
import { detailsPutOffSql } from "./mirror/details-put-off.js";
import type { Dialect } from "./mirror/dialect.js";
import { unlistedSql } from "./mirror/unlisted.js";
import { readSql } from "./reads.js";
import { runSql } from "./runs.js";
import type { Snapshot } from "./snapshot.js";
import { readCheckpoints, readFill, readStatus } from "./status.js";

/** The statements a store answers in dialect `d`, by port method. */
export function storeSql(d: Dialect) {
  const { readProgress, ...reads } = readSql(d);
  const { markUnlisted, ...unlisted } = unlistedSql(d);
  const runs = runSql(d);
  return {
    /** Answered as they come, beside saved pages. */
    reads: { ...reads, ...unlisted, lastRun: runs.lastRun, recentRuns: runs.recentRuns },
    /** Writes that build on saved pages, so those commit first. */
    afterPages: { markUnlisted, ...detailsPutOffSql(d), recordDrift: runs.recordDrift },
    readProgress,
    runs,
  };
}

/**
 * The status reads, each in one snapshot of what is committed, on a connection of its own: never
 * waiting behind the writer's open batch. `page` takes the status page's (SQLite's reads it on a
 * thread of its own, status-worker.ts).
 */
export function statusReads(snapshot: Snapshot, page: Snapshot = snapshot) {
  return {
    /** What `booking-sync status` shows as of `at`. */
    readStatus: (at: Date) => snapshot((r) => readStatus(r, at)),
    /** Each stream's committed checkpoint. */
    readCheckpoints: () => snapshot(readCheckpoints),
    /** The fill stored as `stream`'s committed progress as of `at`; null when none. */
    readFill: (stream: string, at: Date) => snapshot((r) => readFill(r, stream, at)),
    /** The events stream and its webhook's delivery as of `at` (what /metrics shows); null before its tables. */
    readEventsStatus: (at: Date) => snapshot((r) => readEventsStatus(r, at)),
    /** The status and the daily totals of the status page as of `at`, in one snapshot. */
    readStatusPage: (at: Date) => page((r) => readStatusPage(r, at)),
  };
}

type Asks = Record<string, (...args: never[]) => Ask<unknown>>;

/** `asks` as methods whose answers come at once (SQLite) or later (PostgreSQL). */
export type Either<S> = {
  [K in keyof S]: S[K] extends (...a: infer A) => Ask<infer T> ? (...a: A) => Awaitable<T> : never;
};

/** Each of `asks` as a method that executes its statement through `answer`. */
export function answering<S extends Asks>(asks: S, answer: (ask: Ask<unknown>) => unknown): Either<S> {
  const methods = Object.entries(asks).map(([name, ask]) => [
    name,
    (...args: never[]) => answer(ask(...args)),
  ]);
  return Object.fromEntries(methods) as Either<S>;
}
