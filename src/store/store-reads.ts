/**
 * What both stores answer the same way: the reads of the mirror, of reconcile and of `sync_runs`,
 * each a statement written once (reads.ts, runs.ts, mirror/unlisted.ts) that a store only executes.
 */
import { readStatusPage } from "./daily.js";
import type { Dialect } from "./mirror/dialect.js";
import { type Ask, unlistedSql } from "./mirror/unlisted.js";
import { readSql } from "./reads.js";
import { runSql } from "./runs.js";
import type { Snapshot } from "./snapshot.js";
import { readCheckpoints, readFill, readStatus } from "./status.js";

/** The statements a store answers in dialect `d`, by port method. */
export function storeSql(d: Dialect) {
  const read = readSql(d);
  const unlisted = unlistedSql(d);
  const runs = runSql(d);
  /** Answered as they come, beside saved pages. */
  const reads = {
    readStream: read.readStream,
    countBookings: read.countBookings,
    bookingsNeedingDetails: read.bookingsNeedingDetails,
    countAccounted: read.countAccounted,
    absentIds: read.absentIds,
    unlistedTimes: unlisted.unlistedTimes,
    countUnlisted: unlisted.countUnlisted,
    lastRun: runs.lastRun,
    recentRuns: runs.recentRuns,
  };
  /** Writes that build on saved pages, so those commit first. */
  const afterPages = { markUnlisted: unlisted.markUnlisted, recordDrift: runs.recordDrift };
  return { reads, afterPages, readProgress: read.readProgress, runs };
}

/**
 * The status reads, each in one snapshot of what is committed; `page` takes the status page's
 * (SQLite's reads it on a thread of its own, status-worker.ts).
 */
export function statusReads(snapshot: Snapshot, page: Snapshot = snapshot) {
  return {
    readStatus: (at: Date) => snapshot((r) => readStatus(r, at)),
    readCheckpoints: () => snapshot(readCheckpoints),
    readFill: (stream: string, at: Date) => snapshot((r) => readFill(r, stream, at)),
    readStatusPage: (at: Date) => page((r) => readStatusPage(r, at)),
  };
}

type Asks = Record<string, (...args: never[]) => Ask<unknown>>;

/** `asks` as methods whose answers come at once (SQLite). */
export type Answered<S> = {
  [K in keyof S]: S[K] extends (...a: infer A) => Ask<infer T> ? (...a: A) => T : never;
};

/** `asks` as methods whose answers come later (PostgreSQL). */
export type Promised<S> = {
  [K in keyof S]: S[K] extends (...a: infer A) => Ask<infer T> ? (...a: A) => Promise<T> : never;
};

/** Each of `asks` as a method that executes its statement through `answer`. */
export function answering<S extends Asks>(asks: S, answer: (ask: Ask<unknown>) => unknown): unknown {
  const methods = Object.entries(asks).map(([name, ask]) => [
    name,
    (...args: never[]) => answer(ask(...args)),
  ]);
  return Object.fromEntries(methods);
}
