/**
 * A read inside a status snapshot that may fail in a way the caller expects (PostgreSQL refusing an
 * overflowing sum, a table an older mirror lacks): PostgreSQL aborts the whole transaction at a failed
 * statement, so the read runs under a savepoint and the snapshot goes on after it.
 */
import type { MirrorReader } from "./snapshot.js";

/** `read`'s answer, or undefined when it throws an error `expected` accepts (any other is thrown). */
export async function unlessFails<R>(
  db: MirrorReader,
  name: string,
  read: () => Promise<R>,
  expected: (err: unknown) => boolean,
): Promise<R | undefined> {
  await db.all(`SAVEPOINT ${name}`);
  try {
    const answer = await read();
    await db.all(`RELEASE SAVEPOINT ${name}`);
    return answer;
  } catch (err) {
    if (!expected(err)) throw err;
    await db.all(`ROLLBACK TO SAVEPOINT ${name}`);
    await db.all(`RELEASE SAVEPOINT ${name}`);
    return undefined;
  }
}

/** Whether `err` says a table does not exist, on either database (PostgreSQL's SQLSTATE 42P01). */
export function isMissingTable(err: unknown): boolean {
  const { code, message } = (err ?? {}) as { code?: unknown; message?: unknown };
  return code === "42P01" || (typeof message === "string" && /^no such table: /.test(message));
}
