/**
 * The store's one batching rule: each page in a savepoint of a transaction that commits at `pages`
 * pages, after `ms`, or when anything else is written. Every page carries its progress, so any
 * committed prefix is consistent.
 */
import type Database from "better-sqlite3";

export interface BatchRule {
  /** Pages one transaction holds at most; default 20. */
  pages: number;
  /** Longest a saved page waits for its commit, ms; default 1000. */
  ms: number;
}

export const DEFAULT_BATCH: BatchRule = { pages: 20, ms: 1000 };

export interface Batch {
  /** Runs `write` as the next page of the open transaction (opening one), in its own savepoint. */
  page<T>(write: () => T): T;
  /** Commits the open transaction, if any; throws a failure of a background commit once. */
  commit(): void;
}

export function batch(db: Database.Database, rule: BatchRule = DEFAULT_BATCH): Batch {
  let pages = 0;
  let timer: NodeJS.Timeout | undefined;
  let failure: unknown;
  const inSavepoint = <T>(write: () => T) => db.transaction(write)();

  const commit = (): void => {
    clearTimeout(timer);
    timer = undefined;
    pages = 0;
    // SQLite may have rolled the transaction back itself (a full disk); nothing is left to commit.
    if (db.inTransaction) db.exec("COMMIT");
  };
  const commitLater = () => {
    try {
      commit();
    } catch (err) {
      failure = err;
      if (db.inTransaction) db.exec("ROLLBACK");
    }
  };
  const throwFailure = () => {
    if (failure === undefined) return;
    const err = failure;
    failure = undefined;
    throw new Error("store: a batch of pages could not be committed", { cause: err });
  };

  return {
    page(write) {
      throwFailure();
      if (!db.inTransaction) {
        clearTimeout(timer);
        db.exec("BEGIN IMMEDIATE");
        pages = 0;
        // Unref'd: an idle process exits, and `close` commits what is left.
        timer = setTimeout(commitLater, rule.ms).unref();
      }
      const result = inSavepoint(write);
      if (++pages >= rule.pages) commit();
      return result;
    },
    commit() {
      commit();
      throwFailure();
    },
  };
}
