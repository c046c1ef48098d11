/**
 * The writer's connection: everything the core asks goes through it in call order, and saved pages
 * batch by the store's one rule (store/batch.ts). Unlike SQLite, a page that fails, or any statement
 * that fails in the open transaction, aborts it: its pages are lost with their progress.
 */
import type { PoolClient } from "pg";
import { systemClock } from "../../clock.js";
import type { TimerClock } from "../../sync/ports.js";
import { type BatchRule, batching } from "../batch.js";
import { type Query, queryOn } from "./sql.js";

/** The writer's connection as `openSession` gives it. */
export type Session = ReturnType<typeof openSession>;

export function openSession(
  client: PoolClient,
  rule: BatchRule,
  onBroken: (err: Error) => void,
  clock: TimerClock = systemClock,
  onCommit?: () => void,
) {
  const query = queryOn(client);
  const rules = batching(rule, clock, () => turn(commit));
  let tail: Promise<unknown> = Promise.resolve();
  let open = false;
  let broken: Error | undefined;
  let closed = false;

  const breaks = (err: Error) => {
    if (broken) return;
    broken = new Error("store: the connection to PostgreSQL was lost", { cause: err });
    onBroken(broken);
  };
  const ended = () => breaks(new Error("the server closed the connection"));
  client.on("error", breaks);
  client.on("end", ended);

  /** Runs `task` on the connection once everything asked before it is done; reads see saved pages. */
  const turn = <T>(task: (q: Query) => Promise<T>): Promise<T> => {
    const run = tail.then(async () => {
      if (broken) throw broken;
      try {
        return await task(query);
      } catch (err) {
        // A failed statement aborts the open transaction: its pages are gone, whoever asked.
        if (open) await loss(err);
        throw err;
      }
    });
    tail = run.catch(() => {});
    return run;
  };
  const loss = async (err: unknown): Promise<Error> => {
    const lost = rules.lose(err);
    if (open) {
      open = false;
      await query("ROLLBACK").catch(() => {});
    }
    return lost;
  };
  const commit = async (): Promise<void> => {
    rules.closing();
    if (!open) return;
    open = false;
    let done: string;
    try {
      done = (await client.query("COMMIT")).command;
    } catch (err) {
      throw await loss(err);
    }
    // An aborted transaction answers COMMIT with ROLLBACK, and no error.
    if (done !== "COMMIT") throw await loss(new Error(`COMMIT answered ${done}`));
    onCommit?.();
  };

  /** Commits the saved pages, then runs `task` outside the batch (each statement commits); refused after a loss. */
  const afterPages = <T>(task: (q: Query) => Promise<T>): Promise<T> =>
    turn(async () => {
      await commit();
      rules.check();
      return task(query);
    });

  return {
    turn,
    /** Writes the next page in the open transaction (opening one). */
    page: <T>(write: (q: Query) => Promise<T>) =>
      turn(async () => {
        rules.check();
        if (!open) {
          await query("BEGIN");
          open = true;
          rules.opened();
        }
        try {
          const result = await write(query);
          if (rules.added(result)) await commit();
          return result;
        } catch (err) {
          throw await loss(err);
        }
      }),
    afterPages,
    /** As `afterPages`, even after a loss: a run's end and the lease are recorded whatever. */
    besidePages: <T>(task: (q: Query) => Promise<T>) =>
      turn(async () => {
        await commit().catch(() => {});
        return task(query);
      }),
    /** Commits, and throws if any page was lost since `reset`. */
    flush: () => afterPages(async () => {}),
    /** Forgets a loss: a new run starts from what is committed. */
    reset: () => turn(async () => rules.reset()),
    /** Commits what it can and gives the connection back, closed. */
    async close() {
      if (closed) return;
      closed = true;
      await turn(commit).catch(() => {});
      client.off("error", breaks);
      client.off("end", ended);
      client.release(broken ?? true);
    },
    /** Set once the connection failed: the session takes nothing more. */
    get broken() {
      return broken;
    },
  };
}
