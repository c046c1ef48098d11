/**
 * The store's one batching rule: each page in a savepoint of a transaction that commits at `pages`
 * pages, after `ms`, or when anything else is written. Every page carries its progress, so any
 * committed prefix is consistent. Once pages were lost (a commit failed, or SQLite rolled the
 * transaction back itself), no page is taken until the next run: its progress would count them.
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
  /** Commits the open transaction, if any; throws when that loses its pages. */
  commit(): void;
  /** Commits, and throws if any page was lost since `reset`. */
  flush(): void;
  /** Forgets a loss: a new run starts from what is committed. */
  reset(): void;
}

export function batch(db: Database.Database, rule: BatchRule = DEFAULT_BATCH): Batch {
  let pages = 0;
  let timer: NodeJS.Timeout | undefined;
  let lost: Error | undefined;
  const inSavepoint = <T>(write: () => T) => db.transaction(write)();

  const loss = (err: unknown) => {
    lost ??= new Error("store: saved pages were not committed; the next run reads them again", {
      cause: err,
    });
    if (db.inTransaction) db.exec("ROLLBACK");
    return lost;
  };
  const commit = (): void => {
    clearTimeout(timer);
    timer = undefined;
    const had = pages;
    pages = 0;
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
  };

  return {
    page(write) {
      if (lost) throw lost;
      if (!db.inTransaction) {
        clearTimeout(timer);
        db.exec("BEGIN IMMEDIATE");
        pages = 0;
        // Unref'd: an idle process exits, and `close` commits what is left. A failure here is
        // kept as `lost` and thrown by the next page or flush.
        timer = setTimeout(() => {
          try {
            commit();
          } catch {}
        }, rule.ms).unref();
      }
      try {
        const result = inSavepoint(write);
        if (++pages >= rule.pages) commit();
        return result;
      } catch (err) {
        // The savepoint undid this page alone, unless SQLite dropped the whole transaction.
        if (pages > 0 && !db.inTransaction) throw loss(err);
        throw err;
      }
    },
    commit,
    flush() {
      commit();
      if (lost) throw lost;
    },
    reset() {
      lost = undefined;
    },
  };
}
