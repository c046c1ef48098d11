/**
 * A statement with the rule that turns its rows into a port's answer: what every store read and
 * write is written as once (reads.ts, runs.ts, mirror/*), for either database to execute.
 */
import type { Statement } from "./statements.js";

/** A statement and how its rows make the answer. */
export interface Ask<T> {
  statement: Statement;
  answer(rows: Array<Record<string, unknown>>): T;
  /**
   * The booking events its rows make, to write in the same transaction when the store records
   * events (reconcile's marks: one `booking.missing` a booking marked).
   */
  events?: (rows: Array<Record<string, unknown>>) => Statement[];
}

/** The `Ask` of `sql` bound to `params`, its rows made the answer by `answer`. */
export function asking<T>(sql: string, params: unknown[], answer: Ask<T>["answer"]): Ask<T> {
  return { statement: { sql, params }, answer };
}
