/**
 * The mirror's tables in PostgreSQL, built from their one description in `../tables.ts`, so the same
 * SQL and values work on both backends. What differs from SQLite's kinds, and why:
 * - text compares byte by byte (`COLLATE "C"`), like SQLite's BINARY and JS's `<`, whatever the
 *   database's locale: times stay ISO 8601 UTC text, so text order is still time order, and `ORDER BY`,
 *   `max()` and `id > ?` agree with SQLite's; JSON is text (not jsonb), so it reads back byte for byte;
 * - flags stay `integer` 0/1 (the views and `booking_changes` show them as 0/1);
 * - the source's integers (states, counts, totals) are `bigint`, as wide as SQLite's INTEGER: the
 *   API client lets through any safe integer, and one a 32-bit column refused would stop every run;
 * - `real` becomes `double precision`, SQLite's REAL;
 * - ids are `integer` identities: `RETURNING id` gives a JS number (pg returns int8 as a string), and
 *   GENERATED ALWAYS refuses an explicit id, which would leave the sequence behind;
 * - the events stream's ids and the columns that hold one are `bigint` (identities too): a busy
 *   mirror's events may pass 2^31 in its life. The pool reads int8 as a JS number (connect.ts), exact
 *   for an event id: they stay far below 2^53 (a million a day for 24,000 years);
 * - an index on the source's text is a hash index, which holds any length: a B-tree entry over
 *   ~2.7 kB fails its insert, and the source may send one.
 * Migrations under `drizzle/postgres/` are generated from this file and must not drift from it.
 */
import {
  bigint,
  check,
  customType,
  doublePrecision,
  index,
  integer,
  pgTable,
  primaryKey,
} from "drizzle-orm/pg-core";
import { mirrorTables } from "../tables.js";

const text = customType<{ data: string; driverData: string }>({ dataType: () => 'text COLLATE "C"' });

const tables = mirrorTables({
  name: "pg",
  table: pgTable,
  text: (name) => text(name),
  integer: (name) => integer(name),
  wide: (name) => bigint(name, { mode: "number" }),
  real: (name) => doublePrecision(name),
  flag: (name) => integer(name),
  id: (name) => integer(name).primaryKey().generatedAlwaysAsIdentity(),
  position: (name) => bigint(name, { mode: "number" }),
  positionId: (name) => bigint(name, { mode: "number" }).primaryKey().generatedAlwaysAsIdentity(),
  index,
  textIndex: (name, column) => index(name).using("hash", column as never),
  check,
  primaryKey,
});

export const { bookings, bookingPackages, bookingItems, bookingChanges, stateLabels } = tables;
export const { syncState, syncRuns, rejectedRecords, leases } = tables;
export const { bookingEvents, eventDelivery, eventReplays, eventStream } = tables;
