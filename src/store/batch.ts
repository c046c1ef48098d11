/**
 * The store's one batching rule, for both backends: each page with its progress in a transaction
 * that commits at `pages` pages, `ms` after its first page (on the clock), or when anything else is
 * written. Every page carries its progress, so any committed prefix is consistent. Once pages were
 * lost (a commit failed, or the database dropped the transaction), no page is taken until the next
 * run: its progress would count them. `batching` keeps the rule; SQLite's `batch` below and
 * PostgreSQL's session (postgres/session.ts) only run BEGIN, COMMIT and ROLLBACK.
 */
import type Database from "better-sqlite3";
import { systemClock } from "../clock.js";
import { PagesLost } from "../errors.js";
import type { TimerClock, UpsertCounts } from "../sync/ports.js";

export interface BatchRule {
  /** Pages one transaction holds at most; default 20. */
  pages: number;
  /** Longest a saved page waits for its commit, ms; default 1000. */
  ms: number;
}

export const DEFAULT_BATCH: BatchRule = { pages: 20, ms: 1000 };

const KEYS = ["inserted", "updated", "unchanged", "rejected"] as const;

/** The rule's state for one writer connection; `due` commits, and what it throws is already the loss. */
export function batching(rule: BatchRule, clock: TimerClock, due: () => unknown) {
  let pages = 0;
  let cancel: (() => void) | undefined;
  let lost: Error | undefined;
  /** What the open (or last) transaction's pages counted; reset when one opens. */
  const counted: UpsertCounts = { inserted: 0, updated: 0, unchanged: 0, rejected: 0 };
  /** The transaction ends: stops its timer; returns how many pages it held. */
  const closing = () => {
    cancel?.();
    cancel = undefined;
    const had = pages;
    pages = 0;
    return had;
  };
  const fire = () => {
    try {
      Promise.resolve(due()).catch(() => {});
    } catch {}
  };
  return {
    closing,
    /** Throws the loss, if pages were lost since `reset`. */
    check() {
      if (lost) throw lost;
    },
    /** A transaction was opened: its commit is due in `ms`. */
    opened() {
      closing();
      for (const key of KEYS) counted[key] = 0;
      cancel = clock.setTimeout(fire, rule.ms);
    },
    /** A page was written in it (`result`: what its save counted); true when the transaction is full and must commit now. */
    added(result?: unknown) {
      const counts = result as Partial<UpsertCounts> | undefined;
      for (const key of KEYS) counted[key] += typeof counts?.[key] === "number" ? counts[key] : 0;
      return ++pages >= rule.pages;
    },
    /** The open transaction's pages are gone: keeps the first loss, and returns it to throw. */
    lose(cause: unknown): Error {
      closing();
      lost ??= new PagesLost(cause, { ...counted });
      return lost;
    },
    /** Forgets a loss: a new run starts from what is committed. */
    reset() {
      lost = undefined;
    },
  };
}

/** SQLite's batch: synchronous; a page that fails loses its batch, as on PostgreSQL. */
export function batch(
  db: Database.Database,
  rule = DEFAULT_BATCH,
  clock: TimerClock = systemClock,
  onCommit?: () => void,
) {
  const rules = batching(rule, clock, () => commit());
  const loss = (err: unknown) => {
    const lost = rules.lose(err);
    if (db.inTransaction) db.exec("ROLLBACK");
    return lost;
  };
  /** Commits the open transaction, if any; throws when that loses its pages. */
  const commit = (): void => {
    const had = rules.closing();
    if (!db.inTransaction) {
      // SQLite rolled the transaction back itself (a full disk): its pages are gone.
      if (had > 0) throw loss(new Error("the transaction was rolled back"));
      return;
    }
    try {
      db.exec("COMMIT");
    } catch (err) {
      throw loss(err);
    }
    if (had > 0) onCommit?.();
  };
  return {
    commit,
    reset: rules.reset,
    /** Runs `write` as the next page of the open transaction (opening one). */
    page<T>(write: () => T): T {
      rules.check();
      if (!db.inTransaction) {
        db.exec("BEGIN IMMEDIATE");
        rules.opened();
      }
      let result: T;
      try {
        result = write();
      } catch (err) {
        // A page that fails takes its batch with it, as on PostgreSQL. A savepoint per page would
        // keep the earlier pages, but journals every database page it changes (docs/performance.md).
        throw loss(err);
      }
      if (rules.added(result)) commit();
      return result;
    },
    /** Commits, and throws if any page was lost since `reset`. */
    flush() {
      commit();
      rules.check();
    },
  };
}
